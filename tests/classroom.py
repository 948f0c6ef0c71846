"""A class of mixed submissions to rel_shift, for `grade batch` (tests/instructor/test_batch.py, benchmarks/batch.py).

Every submission is made from solutions/rel_shift/ when the class is written, so it follows the
reference: the reference itself (in a student's folder), each correct alternative, each known mistake of
pitfalls.toml (the reference with that pitfall's replacements: a wrong file by construction, to be named
as that pitfall), and the reference with one misbehaviour added: a call that never returns, an exception
at import, sys.exit and os._exit during a call, and megabytes printed before a right answer. One
student's folder holds no rel_shift.py at all.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLUG = "rel_shift"
SOLUTIONS = ROOT / "solutions" / SLUG


@dataclass(frozen=True)
class Expected:
    """What the gradebook must say of a student: the status and, for a known mistake, its id."""

    status: str
    pitfall: str = ""


WRAP = '''

_right = rel_shift


def rel_shift(seed, x):
{body}'''

HOSTILE = {
    # name: (source added to the reference, expected status)
    "hangs": (WRAP.format(body="    while True:\n        pass\n"), "timeout"),
    "raises_at_import": ('\nraise RuntimeError("this module cannot be loaded")\n', "error"),
    "exits_in_call": (WRAP.format(body="    import sys\n    sys.exit(0)\n"), "error"),
    "os_exit_in_call": (WRAP.format(body="    import os\n    os._exit(3)\n"), "error"),
    "floods_stdout": ('\nimport os\nfor _ in range(64):\n    os.write(1, b"\\x1b[2J pass " * 20_000)\n', "pass"),
}


def pitfalls() -> dict[str, str]:
    """Each known mistake's id -> the reference with its replacements applied."""
    reference = (SOLUTIONS / f"{SLUG}.py").read_text()
    found = {}
    for entry in tomllib.loads((SOLUTIONS / "pitfalls.toml").read_text())["pitfall"]:
        source = reference
        for change in entry["replace"]:
            assert source.count(change["old"]) == 1, (entry["id"], change["old"])
            source = source.replace(change["old"], change["new"])
        found[entry["id"]] = source
    return found


def kinds() -> list[tuple[str, str | None, Expected]]:
    """(kind, source or None for an empty folder, expected), one of each kind of submission."""
    reference = (SOLUTIONS / f"{SLUG}.py").read_text()
    made = [("reference", reference, Expected("pass"))]
    made += [(f"alt_{p.stem}", p.read_text(), Expected("pass")) for p in sorted((SOLUTIONS / "alternatives").glob("*.py"))]
    made += [(f"wrong_{name}", source, Expected("fail", name)) for name, source in pitfalls().items()]
    made += [(name, reference + extra, Expected(status)) for name, (extra, status) in HOSTILE.items()]
    return made + [("no_file", None, Expected("error"))]


def write_class(folder: Path, chosen: list[str]) -> dict[str, Expected]:
    """Write one student per kind named in ``chosen`` (repeats allowed: each gets its own student, with a
    comment that makes the file its own) into ``folder``: a student folder for the reference and the
    empty one, a <student>.py file for the rest. Returns student -> Expected."""
    by_kind = {kind: (source, expected) for kind, source, expected in kinds()}
    folder.mkdir(parents=True, exist_ok=True)
    students = {}
    for number, kind in enumerate(chosen, 1):
        source, expected = by_kind[kind]
        student = f"s{number:02d}_{kind}"
        if source is None:
            (folder / student).mkdir()
            (folder / student / "notes.txt").write_text("forgot to upload\n")
        elif kind == "reference":
            (folder / student).mkdir()
            (folder / student / f"{SLUG}.py").write_text(source + f"\n# {student}\n")
        else:
            (folder / f"{student}.py").write_text(source + f"\n# {student}\n")
        students[student] = expected
    return students


def mixed(size: int) -> list[str]:
    """``size`` kinds, every kind before any repeats, in a fixed order."""
    every = [kind for kind, _, _ in kinds()]
    return [every[i % len(every)] for i in range(size)]
