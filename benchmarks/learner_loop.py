"""A learner's loop, timed against another checkout in one run: pass and fail, cold and re-graded.

For each problem, from empty caches and no zygote: the reference graded cold, then again after an edit
(a passing re-grade); then a wrong submission graded cold (the first failure, explained), then again
after an edit (the same failure re-graded). Each sequence runs alternately from this checkout and, with
``--baseline DIR`` (a git worktree of an earlier commit, say), from that one, several runs each; the
table gives medians and this / baseline. Machines here are shared: compare only within one run.

    .venv/bin/python benchmarks/learner_loop.py [--runs 3] [--baseline /tmp/before] [--problems rmsnorm ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from speed import measure_steps

ROOT = Path(__file__).resolve().parent.parent
# A wrong submission of each problem, wrong on either side of a comparison: a known mistake (its first
# failure also names it), or a realistic one.
WRONG = {
    "t5_relative_pos": "solutions/t5_relative_pos/pitfalls.toml:swapped_direction",
    "rmsnorm": "tests/submissions/rmsnorm/layernorm_mean_var.py",
    "t5_attention": "solutions/t5_attention/pitfalls.toml:scaled_scores",
    "shaw_relative_attention": "solutions/shaw_relative_attention/pitfalls.toml:no_clipping",
    "mini_t5_forward": "tests/submissions/mini_t5_forward/no_ffn_residual.py",
    "t5_forward": "solutions/t5_forward/pitfalls.toml:scaled_attention",
}


def wrong_file(slug: str) -> Path:
    where = WRONG[slug]
    if ":" not in where:
        return ROOT / where
    sys.path.insert(0, str(ROOT))
    from grader.problem import problems

    return problems.load(ROOT, slug).variants("pitfalls")[where.split(":")[1]]


def loop(checkout: Path, slug: str, path: Path) -> list[float]:
    """Seconds of: a cold grade of ``path`` and its re-grade after an edit, from ``checkout``."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GRADE_CACHE_DIR=str(Path(tmp) / "cache"))
        work = Path(tmp) / f"{slug}.py"
        shutil.copy(path, work)
        cmd = [sys.executable, "-m", "grader.cli", slug, "--file", str(work), "--json"]
        results, _ = measure_steps([{"cmd": cmd, "env": env, "cwd": str(checkout)},
                                    {"append": str(work), "text": "\n# an edit\n"},
                                    {"cmd": cmd, "env": env, "cwd": str(checkout)}])
    return [seconds for seconds, _ in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to time alternately")
    parser.add_argument("--problems", nargs="*", default=list(WRONG))
    args = parser.parse_args()
    sides = {"this checkout": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"{args.runs} runs each, medians (s)\n")
    columns = ["cold pass", "re-grade, pass", "first failure", "re-grade, same failure"]
    print("| problem | checkout | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for slug in args.problems:
        times = {side: [[] for _ in columns] for side in sides}
        for _ in range(args.runs):
            for side, checkout in sides.items():
                passing = loop(checkout, slug, ROOT / "solutions" / slug / f"{slug}.py")
                failing = loop(checkout, slug, wrong_file(slug))
                for i, seconds in enumerate(passing + failing):
                    times[side][i].append(seconds)
        medians = {side: [statistics.median(t) for t in times[side]] for side in sides}
        for side in sides:
            print(f"| {slug} | {side} | " + " | ".join(f"{m:.2f}" for m in medians[side]) + " |", flush=True)
        if args.baseline:
            ratios = [a / b for a, b in zip(medians["this checkout"], medians["baseline"])]
            print(f"| {slug} | this / baseline | " + " | ".join(f"{r:.0%}" for r in ratios) + " |", flush=True)


if __name__ == "__main__":
    main()
