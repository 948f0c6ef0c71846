"""How precise the feedback is on the whole corpus of realistic submissions (tests/submissions/).

Each submission is graded with `grade <problem> --file <it> --json`, as a learner runs it, and its
report is held against its manifest entry. Prints one line per submission and the tallies the feedback
is measured by: wrong names (must be 0), listed mistakes named, every mistake whose manifest gives its
part located at that first wrong part (a pointer elsewhere is "not located": must be 0), correct
submissions passing, and the share of wrong submissions that get a name, a diagnosis or a part below the
top level; and each run's seconds.

    .venv/bin/python benchmarks/feedback.py [--problems mini_t5_forward ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "submissions"


def verdict_on(slug: str, name: str, entry: dict) -> tuple[str, str, bool]:
    """(tally, one line, whether a wrong submission's report points somewhere: a known mistake named, a
    diagnosis, or a first wrong part below the top level) for one submission."""
    started = time.monotonic()
    done = subprocess.run([str(Path(sys.executable).parent / "grade"), slug, "--json", "--file",
                           str(CORPUS / slug / f"{name}.py")], capture_output=True, text=True, cwd=ROOT)
    seconds = time.monotonic() - started
    report = json.loads(done.stdout)
    named = report["pitfall"]["id"] if report["pitfall"] else None
    part = report["first_wrong_part"]["path"] if report["first_wrong_part"] else None
    diagnosis = report["diagnosis"]["id"] if report["diagnosis"] else None
    line = (f"{slug}/{name}: {report['status']} in {seconds:.1f} s; named {named}, part {part!r}, "
            f"diagnosis {diagnosis}")
    pointed = bool(entry["mistake"]) and bool(named or diagnosis or part)
    return (*_tally(report, entry, named, part, diagnosis, line), pointed)


def _tally(report: dict, entry: dict, named, part, diagnosis, line: str) -> tuple[str, str]:
    if not entry["mistake"]:
        return ("correct passes" if report["status"] == "pass" else "correct fails"), line
    if report["status"] == "pass":
        return "mistake passes", line
    if named not in (None, entry.get("listed")):
        return "wrong name", line + f" (the mistake: {entry['mistake']})"
    if "listed" in entry:
        if named and "part" in entry and part != entry["part"]:  # named, but pointed at another part
            return "listed, named, not located", line + f" (its first wrong part is {entry['part']!r})"
        return ("listed, named" if named else "listed, not named"), line
    if named is not None:
        return "unlisted, named", line
    if "part" in entry:
        return ("unlisted, located" if part == entry["part"] else "unlisted, not located"), line + \
            (f" (its first wrong part is {entry['part']!r})" if part != entry["part"] else "")
    return "unlisted, " + ("diagnosed" if diagnosis else "nothing said"), line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="*", default=sorted(p.name for p in CORPUS.iterdir() if p.is_dir()))
    args = parser.parse_args()
    for slug in args.problems:
        tally: Counter = Counter()
        wrong = pointed = 0
        for name, entry in tomllib.loads((CORPUS / slug / "manifest.toml").read_text()).items():
            kind, line, points = verdict_on(slug, name, entry)
            tally[kind] += 1
            wrong += bool(entry["mistake"])
            pointed += points
            print(f"  {kind:22} {line}", flush=True)
        print(f"{slug}: " + ", ".join(f"{kind} {n}" for kind, n in sorted(tally.items())), flush=True)
        print(f"{slug}: {pointed} of {wrong} wrong submissions ({pointed / max(wrong, 1):.0%}) get a name, a "
              "diagnosis or a first wrong part below the top level\n", flush=True)


if __name__ == "__main__":
    main()
