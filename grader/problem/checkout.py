"""The checkout: where it is, what it holds, and what learner code may and may not read in it.

A checkout is a folder with ``problems/`` and ``solutions/`` (a handout has ``problems/`` and ``HANDOUT.md``
instead). Its problems are the folders of ``problems/`` with a ``problem.toml``, in the learning order; its
caches live under ``.grade/``; ``solutions/SECRET`` seeds the inputs only a class's verdicts use.
"""

from __future__ import annotations

import hashlib
import math
import os
import tomllib
from pathlib import Path

from grader.problem.errors import UsageError
from grader.problem.metadata import number


def find_root(start: Path | None = None) -> Path:
    """The checkout that holds ``problems/`` and ``solutions/`` (or a handout's ``problems/`` and
    ``HANDOUT.md``), from ``start`` or any folder inside it."""
    here = (start or Path.cwd()).resolve()
    installed = Path(__file__).resolve().parents[2]  # the checkout the grader is installed from
    for folder in (here, *here.parents, installed):
        if (folder / "problems").is_dir() and ((folder / "solutions").is_dir() or (folder / "HANDOUT.md").is_file()):
            return folder
    raise UsageError(f"no kata checkout (a folder with problems/ and solutions/) at or above {here}")


def find_checkout(command: str) -> Path:
    """:func:`find_root`, for a command that needs the solutions (``command`` names it): not a handout."""
    root = find_root()
    if not (root / "solutions").is_dir():
        raise UsageError(f"this is a handout: {command} needs the full checkout, with solutions/")
    return root


def cache_folder(root: Path) -> Path:
    """Where reference outputs, drawn inputs and compiled programs are kept (GRADE_CACHE_DIR overrides)."""
    return Path(os.environ.get("GRADE_CACHE_DIR") or root / ".grade" / "cache")


def hidden_from_learners(root: Path) -> tuple[str, ...]:
    """What learner code must not read, where it is confined: what gives the answer away (the solutions and
    the checkout's history, the reference's outputs kept in the cache, a handout's recorded answers), and
    what the command that started this one names (a class's folders and gradebook: see
    :mod:`grader.core.submission`)."""
    from grader.core.submission import hidden_by_environment

    # The checkout the grader itself is installed from may be another one (an editable install, an
    # instructor's second copy): its solutions give the answers away as well.
    installed = Path(__file__).resolve().parents[2]
    checkouts = dict.fromkeys([root, *([installed] if (installed / "solutions").is_dir() else [])])
    return (*(str(c / name) for c in checkouts for name in ("solutions", ".git")), str(cache_folder(root)),
            *map(str, sorted(root.glob("problems/*/recorded.npz"))), *hidden_by_environment())


def learner_view(root: Path, slug: str, graded: Path) -> tuple[str, ...]:
    """The folders learner code sees beside the interpreter and the grader, where it is confined: the graded
    problem's own folder and the graded file's. Not the other problems' (a later kata gives an earlier
    one's answer: mini T5's stub holds an RMSNorm)."""
    return str(root / "problems" / slug), str(Path(graded).resolve().parent)


SECRET_FILE = "SECRET"  # solutions/SECRET: what the inputs only the instructor's verdicts use are drawn from
SECRET_VARIABLE = "GRADE_SECRET_INPUTS"  # "1" in the environment of the gradings of `grade batch` and Gradescope


def class_grading() -> bool:
    """Whether `grade batch` or the Gradescope autograder started this command: a class's submissions, each
    graded once (no compile cache kept for a file that is never graded again), on the secret inputs too."""
    return os.environ.get(SECRET_VARIABLE) == "1"


def secret_seed(root: Path) -> int | None:
    """The seed of the inputs drawn, beside the public ones, for the instructor's verdicts: where `grade
    batch` or the Gradescope autograder started this command, from ``solutions/SECRET`` (hidden from learner
    code with the rest of solutions/). Nobody can compute the outputs on them in advance from a handout or
    from the public inputs. None elsewhere: a learner's own runs and a handout grade on the public inputs."""
    if not class_grading():
        return None
    try:
        secret = (root / "solutions" / SECRET_FILE).read_bytes().strip()
    except OSError:
        return None
    return int.from_bytes(hashlib.sha256(secret).digest()[:8], "little") if secret else None


def ensure_secret(root: Path) -> Path:
    """``solutions/SECRET``, made with 32 random bytes where the checkout has none (`grade batch` and `grade
    gradescope` call it); never committed (.gitignore)."""
    import secrets

    path = root / "solutions" / SECRET_FILE
    if not path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            return path  # made meanwhile by another command
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    return path


def graded_file(path: Path) -> Path:
    """The file to grade, ``path`` with the links of the folders on its way resolved; a UsageError where
    ``path`` itself is a symbolic link (as `grade batch` refuses one: a link could point the grader, maybe
    root, at a file its owner could not read, and the report would show its lines) or cannot be resolved."""
    if os.path.islink(path):
        raise UsageError(f"{path} is a symbolic link: give the file itself, not a link to one")
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: Python before 3.13 on a loop
        raise UsageError(f"{path} cannot be read: {exc}") from None


def slugs(root: Path) -> list[str]:
    """Every problem, in the learning order: by the ``order`` of its problem.toml, then by name (a problem
    without one, or whose problem.toml does not read, comes last)."""
    found = [p.name for p in (root / "problems").iterdir() if (p / "problem.toml").is_file()]
    return sorted(found, key=lambda slug: (_order(root, slug), slug))


def _order(root: Path, slug: str) -> float:
    try:
        order = tomllib.loads((root / "problems" / slug / "problem.toml").read_text()).get("order")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return math.inf
    return order if number(order) else math.inf


def unknown_problem(root: Path, name: str) -> str:
    """The sentence that says ``name`` is no problem of this checkout, with the one it may be a misspelling of."""
    import difflib

    known = slugs(root)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    guess = f"; did you mean {close[0]}?" if close else ""
    listing = f"the problems are: {', '.join(known)}" if known else "this checkout has no problems"
    return f"no problem named {name!r}{guess} ({listing})"


def relative(path) -> str:
    """``path`` relative to the current folder when it lies below it, else as given."""
    rel = os.path.relpath(path)
    return str(path) if rel.startswith("..") else rel
