"""How long a learner waits for the first verdict on a wrong model, from cold caches.

A wrong model's first grading is the slowest a learner meets: after the failure, every known-wrong
variant runs on the failing input to name the mistake (a trace of the whole model each). Each submission
below is graded with `grade <problem> --file <it> --json` in a fresh cache folder, with no zygote kept,
alternately by this checkout and, with ``--baseline DIR`` (a git worktree of an earlier commit, say), by
that one, several runs each. Prints the medians and their ratio, and what each verdict named.

    .venv/bin/python benchmarks/first_failure.py [--runs 2] [--baseline /tmp/earlier]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def submissions(folder: Path) -> dict[str, Path]:
    """problem -> a wrong submission of it, written into ``folder``: t5_forward's known mistake of scaled
    attention (named when graded), and a realistic mini T5 whose mistake is no known one."""
    sys.path.insert(0, str(ROOT))
    from grader.problem import problems

    found = {"t5_forward": problems.load(ROOT, "t5_forward").variants("pitfalls")["scaled_attention"],
             "mini_t5_forward": ROOT / "tests" / "submissions" / "mini_t5_forward" / "no_ffn_residual.py"}
    written = {}
    for slug, source in found.items():
        (folder / slug).mkdir()
        written[slug] = folder / slug / f"{slug}.py"
        shutil.copy(source, written[slug])
    return written


def grade_cold(checkout: Path, slug: str, path: Path) -> tuple[float, str]:
    """Seconds of one cold `grade` run from ``checkout``, and what its verdict says."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, GRADE_CACHE_DIR=cache, GRADE_WARM_SECONDS="0")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "grader.cli", slug, "--file", str(path), "--json"],
                              cwd=checkout, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
    report = json.loads(done.stdout)
    named = (report.get("pitfall") or {}).get("id") or "no known mistake"
    return seconds, f"{report['status']}, {named}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--baseline", type=Path, help="another checkout to time alternately")
    args = parser.parse_args()
    sides = {"this checkout": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    print(f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, {args.runs} runs each, medians\n")
    print("| problem | checkout | first grade, cold (s) | verdict |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for slug, path in submissions(Path(folder)).items():
            times: dict[str, list[float]] = {side: [] for side in sides}
            said = {}
            for _ in range(args.runs):
                for side, checkout in sides.items():
                    seconds, said[side] = grade_cold(checkout, slug, path)
                    times[side].append(seconds)
            for side in sides:
                print(f"| {slug} | {side} | {statistics.median(times[side]):.1f} | {said[side]} |", flush=True)
            if args.baseline:
                ratio = statistics.median(times["this checkout"]) / statistics.median(times["baseline"])
                print(f"| {slug} | this / baseline | {ratio:.0%} | |", flush=True)


if __name__ == "__main__":
    main()
