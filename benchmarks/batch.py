"""Throughput of `grade batch` on a class of mixed submissions, --jobs 1 against --jobs 2 in one run.

The class (tests/classroom.py) is written fresh: correct submissions (the reference
and its alternatives), each known mistake of rel_shift, and misbehaving ones (a call that never returns,
an exception at import, sys.exit and os._exit during a call, megabytes printed), every kind before any
repeats. With a cache folder of its own, the class is graded once cold (caches empty, no zygote; as many
at once as there are cores), then once per --jobs value, warm, in the order given; every gradebook is
checked against what each submission must get.

    .venv/bin/python benchmarks/batch.py [--size 40] [--jobs 1 2] [--call-time-limit 4]

Throughput is submissions per minute of wall-clock time; per core, that divided by the cores the batch
had (its --jobs, at most the machine's cores). A grade is more than one process (the grader, the
learner's worker and at times a second worker or the reference's), so one job alone already keeps more
than one core busy part of the time.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import classroom  # noqa: E402

from grader.instructor import batch
from grader.sandbox import zygote  # noqa: E402


def run(folder: Path, out: Path, jobs: int, call_limit: float, env: dict) -> float:
    """Wall seconds of one `grade batch` of ``folder`` into ``out``."""
    cmd = [sys.executable, "-m", "grader.cli", "batch", classroom.SLUG, str(folder), "--out", str(out),
           "--jobs", str(jobs), "--call-time-limit", str(call_limit), "--quiet"]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"grade batch exited with {done.returncode}: {done.stderr.strip()}")
    return wall


def wrong_rows(out: Path, expected: dict[str, classroom.Expected]) -> list[str]:
    """Students whose row is not what their submission must get."""
    with open(out / "gradebook.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    return [name for name, want in expected.items()
            if name not in rows or (rows[name]["status"], rows[name]["pitfall"]) != (want.status, want.pitfall)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=40, help="submissions in the class")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="--jobs values to time, in this order")
    parser.add_argument("--call-time-limit", type=float, default=4.0, help="passed through: what a hang costs")
    args = parser.parse_args()
    cores = batch.cores()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        expected = classroom.write_class(tmp / "class", classroom.mixed(args.size))
        env = dict(os.environ, GRADE_CACHE_DIR=str(tmp / "cache"))
        statuses = sorted({e.status for e in expected.values()})
        print(f"# {time.strftime('%Y-%m-%d')}, {cores} cores, {classroom.SLUG}: {len(expected)} submissions ("
              + ", ".join(f"{sum(e.status == s for e in expected.values())} {s}" for s in statuses)
              + f"), --call-time-limit {args.call_time_limit:g}\n")
        print("| run | --jobs | wall (s) | submissions / min | per core | speed-up over --jobs 1 | rows wrong |")
        print("|---|---|---|---|---|---|---|")
        try:
            results = {}
            for label, jobs in [("cold", cores)] + [("warm", j) for j in args.jobs]:
                out = tmp / f"grades-{label}-{jobs}"
                wall = run(tmp / "class", out, jobs, args.call_time_limit, env)
                rate = len(expected) / wall * 60
                if label == "warm":
                    results[jobs] = wall
                speed = f"{results[1] / wall:.2f}×" if label == "warm" and 1 in results else ""
                print(f"| {label} | {jobs} | {wall:.1f} | {rate:.1f} | {rate / min(jobs, cores):.1f} | {speed} "
                      f"| {len(wrong_rows(out, expected))} |", flush=True)
        finally:
            zygote.stop(tmp / "cache")


if __name__ == "__main__":
    main()
