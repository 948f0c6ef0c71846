"""Every verdict of the corpus (tests/submissions/), recorded on one tree and compared with another's: the
check that a change to the grader's structure left its behaviour alone.

Each submission is graded twice as a learner runs it, from the tree's root with the tree's own Python: once
with `--json` (the object) and once with `--format exercism` (the text report, and exercism's results.json).
What is recorded per submission: the exit code, the JSON object, the text, the exercism object. Seconds are
the one thing allowed to differ (`duration_s`, and "N.N s" in text), so they are written as "<s>".

    .venv/bin/python benchmarks/verdicts.py record OUT.json [--problems rope ...] [--jobs 2]   # on this tree
    .venv/bin/python benchmarks/verdicts.py compare BEFORE.json AFTER.json          # exit 1 on any difference
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "submissions"
SECONDS = re.compile(r"\d+(?:\.\d+)? ?s\b")
CHECKOUT = re.compile(r"/[^\s\"':]*?/(?=(?:tests|grader|\.venv)/)")  # the tree's own folder in a path


def grade(slug: str, file: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", slug, "--file", str(file.relative_to(ROOT)),
                           *options], capture_output=True, text=True, cwd=ROOT)


def without_seconds(value):
    """``value`` with seconds written "<s>" and the tree's folder "<checkout>/": what two trees may differ in."""
    if isinstance(value, str):
        return CHECKOUT.sub("<checkout>/", SECONDS.sub("<s>", value))
    if isinstance(value, dict):
        return {k: "<s>" if k == "duration_s" else without_seconds(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_seconds(v) for v in value]
    return value


def record_one(slug: str, name: str) -> dict:
    file = CORPUS / slug / f"{name}.py"
    as_json = grade(slug, file, "--json")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.json"
        as_text = grade(slug, file, "--format", "exercism", "--output", str(results))
        exercism = json.loads(results.read_text()) if results.is_file() else None
    try:
        obj = json.loads(as_json.stdout)
    except ValueError:
        obj = {"unreadable": as_json.stdout[-2000:], "stderr": as_json.stderr[-2000:]}
    return without_seconds({"json_exit": as_json.returncode, "json": obj, "text_exit": as_text.returncode,
                            "text": as_text.stdout, "exercism": exercism})


def record(out: Path, slugs: list[str], jobs: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    recorded = json.loads(out.read_text()) if out.is_file() else {}  # resumable
    wanted = [(slug, name) for slug in slugs for name in tomllib.loads((CORPUS / slug / "manifest.toml").read_text())
              if f"{slug}/{name}" not in recorded]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for (slug, name), one in zip(wanted, pool.map(lambda sn: record_one(*sn), wanted)):
            recorded[f"{slug}/{name}"] = one
            print(f"{slug}/{name}", one["json"].get("status"), flush=True)
            out.write_text(json.dumps(recorded, indent=1, sort_keys=True))
    print(f"{len(recorded)} submissions recorded in {out}")


def compare(before: Path, after: Path) -> int:
    """Prints each difference between two recordings' common submissions; 1 where there is one, or where
    a submission was recorded on one side only."""
    a, b = (without_seconds(json.loads(p.read_text())) for p in (before, after))  # (recordings of older trees)
    differ = 0
    for key in sorted(set(a) & set(b)):
        for field in sorted(set(a[key]) | set(b[key])):
            if a[key].get(field) != b[key].get(field):
                differ += 1
                print(f"{key}: {field} differs\n  before: {json.dumps(a[key].get(field))[:600]}\n"
                      f"  after:  {json.dumps(b[key].get(field))[:600]}")
    one_side = sorted(set(a) ^ set(b))
    print(f"{len(set(a) & set(b))} submissions in both, {differ} differences; {len(one_side)} recorded on one "
          f"side only{': ' + ', '.join(one_side[:10]) if one_side else ''}")
    return 1 if differ or one_side else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--problems", nargs="*", default=sorted(p.name for p in CORPUS.iterdir() if p.is_dir()))
    rec.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.out.resolve(), args.problems, args.jobs)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
