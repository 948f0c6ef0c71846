"""Speed of `grade` against the plain property test, measured side by side in one run.

For each problem, a correct submission (the reference, and a correct alternative) is graded
alternately by `grade` (cold: empty caches and no zygote, see grader/zygote.py; then re-graded after
an edit, with the zygote the cold run left) and by the plain property test
(benchmarks/plain_property_test.py), several runs each. Then every known-wrong variant goes through
both, to show that the speed is not bought by testing less. Prints a markdown table of medians, ratios,
peak memory and catch rates, and `grade check`'s time over every problem.

    .venv/bin/python benchmarks/speed.py [--runs 3] [--problems t5_relative_pos rmsnorm] [--no-catch]

Peak memory is the largest resident set of any one process of the cold run and the re-grade (the
grader, the zygote or a worker), from getrusage(RUSAGE_CHILDREN) in a process that adopts what they
leave behind.
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
BIN = Path(sys.executable).parent
# The correct alternative timed beside the reference; other problems use their first alternative.
ALTERNATIVE = {"t5_relative_pos": "jnp_vectorised_reordered", "rmsnorm": "rsqrt", "mini_t5_forward": "einsum_heads"}
SLUGS = sorted(p.parent.name for p in (ROOT / "problems").glob("*/problem.toml"))


def alternative(slug: str) -> str:
    return ALTERNATIVE.get(slug) or sorted((ROOT / "solutions" / slug / "alternatives").glob("*.py"))[0].stem


MEASURE = """
import ctypes, json, os, resource, subprocess, sys, time
from pathlib import Path
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: what outlives `grade` (its zygote) comes back here
steps, out = json.loads(sys.argv[1]), []
for step in steps:
    if "append" in step:
        with open(step["append"], "a") as f:
            f.write(step["text"])
        continue
    if "copy" in step:
        Path(step["to"]).write_bytes(Path(step["copy"]).read_bytes())
        continue
    t = time.perf_counter()
    if step.get("first_line"):  # also the seconds until its first line of output
        proc = subprocess.Popen(step["cmd"], env=step["env"], cwd=step.get("cwd"), stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        proc.stdout.readline()
        first = time.perf_counter() - t
        proc.stdout.read()
        out.append([time.perf_counter() - t, proc.wait(), first])
        continue
    rc = subprocess.run(step["cmd"], env=step["env"], cwd=step.get("cwd"), stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode
    out.append([time.perf_counter() - t, rc])
if steps and "env" in steps[-1] and "GRADE_CACHE_DIR" in steps[-1]["env"]:
    from grader.sandbox.zygote import stop
    os.environ.update(steps[-1]["env"])
    stop(Path(steps[-1]["env"]["GRADE_CACHE_DIR"]))
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
print(json.dumps([out, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))
"""


def measure_steps(steps: list[dict]) -> tuple[list[tuple[float, int]], float]:
    """Run commands (``{"cmd", "env"}``, and ``"cwd"`` where given) and file edits (``{"append", "text"}``, or
    ``{"copy", "to"}``) in order, in a process of their own: (wall seconds, exit code) of each command (and,
    for one with ``"first_line": true``, the seconds until its first line of output), and the peak resident
    set in MiB of the largest process among them and everything they started (a zygote left behind is
    stopped first)."""
    done = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(steps)], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    results, rss_kib = json.loads(done.stdout)
    return [tuple(r) for r in results], rss_kib / 1024


def measure(cmd: list[str], env: dict) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MiB of the largest process, exit code) of one command."""
    [(wall, rc)], rss = measure_steps([{"cmd": cmd, "env": env}])
    return wall, rss, rc


def grade_cmd(slug: str, path: Path) -> list[str]:
    return [str(BIN / "grade"), slug, "--file", str(path), "--json"]


def plain_cmd() -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "benchmarks" / "plain_property_test.py")]


def plain_env(slug: str, path: Path, no_shrink: bool = False) -> dict:
    env = dict(os.environ, PLAIN_PROBLEM=slug, PLAIN_FILE=str(path))
    if no_shrink:
        env["PLAIN_NO_SHRINK"] = "1"
    return env


def timing_rows(slug: str, runs: int, reference_only: bool = False) -> list[dict]:
    rows = []
    submissions = [("reference", ROOT / "solutions" / slug / f"{slug}.py"),
                   (alternative(slug), ROOT / "solutions" / slug / "alternatives" / f"{alternative(slug)}.py")]
    for label, path in submissions[:1] if reference_only else submissions:
        cold, regrade, plain, mem = [], [], [], []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                env = dict(os.environ, GRADE_CACHE_DIR=str(Path(tmp) / "cache"))
                work = Path(tmp) / f"{slug}.py"
                shutil.copy(path, work)
                # Cold: empty caches, no zygote. Then the learner edits the file and grades again.
                [(wall, rc), (again, rc2)], rss = measure_steps([
                    {"cmd": grade_cmd(slug, work), "env": env},
                    {"append": str(work), "text": "\n# an edit: the learner touched the file\n"},
                    {"cmd": grade_cmd(slug, work), "env": env}])
                assert rc == rc2 == 0, f"grade failed on {path}"
                cold.append(wall)
                regrade.append(again)
                mem.append(rss)
                wall, _, rc = measure(plain_cmd(), plain_env(slug, work))
                assert rc == 0, f"the plain property test failed on {path}"
                plain.append(wall)
        rows.append({"problem": slug, "submission": label, "cold": statistics.median(cold),
                     "regrade": statistics.median(regrade), "plain": statistics.median(plain),
                     "mem": max(mem)})
    return rows


def catch_rates(slug: str) -> tuple[int, int, int]:
    """(variants, caught by grade, caught by the plain test)."""
    from grader.problem import problems

    variants = list(problems.load(ROOT, slug).variants("pitfalls").values())
    by_grade = by_plain = 0
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GRADE_CACHE_DIR=str(Path(tmp) / "cache"))
        for path in variants:
            by_grade += measure(grade_cmd(slug, path), env)[2] == 1
            by_plain += measure(plain_cmd(), plain_env(slug, path, no_shrink=True))[2] == 1
    return len(variants), by_grade, by_plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--problems", nargs="*", default=SLUGS)
    parser.add_argument("--no-catch", action="store_true", help="skip the known-wrong catch rates")
    parser.add_argument("--only", choices=["timing", "catch", "check", "sandbox"], help="run one part only")
    parser.add_argument("--reference-only", action="store_true", help="time the reference, not the alternative")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, {args.runs} runs each, medians\n")
    if args.only in (None, "timing"):
        timing_table(args)
    if args.only == "catch" or (args.only is None and not args.no_catch):
        print("\n| problem | known-wrong variants | caught by grade | caught by the plain test |")
        print("|---|---|---|---|")
        for slug in args.problems:
            n, g, p = catch_rates(slug)
            print(f"| {slug} | {n} | {g}/{n} | {p}/{n} |", flush=True)
    if args.only in (None, "sandbox"):
        confined, plain = sandbox_cost()
        print(f"\nStarting a worker from a warm zygote, median of 40: {plain * 1000:.1f} ms unconfined, "
              f"{confined * 1000:.1f} ms confined (namespaces cost {(confined - plain) * 1000:.1f} ms per worker)")
    if args.only in (None, "check"):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, GRADE_CACHE_DIR=str(Path(tmp) / "cache"))
            wall, rss, rc = measure([str(BIN / "grade"), "check"], env)
        print(f"\n`grade check` over every problem, cold caches: {wall:.1f} s (exit {rc}), peak memory {rss:.0f} MiB")


SANDBOX = """
import json, statistics, sys, tempfile, time
from pathlib import Path
from grader.sandbox import isolation, zygote
from grader.sandbox.pool import Spec, Worker

assert isolation.probe() is None, "namespaces are refused here"
own = zygote.Zygote.start(None, [])
own.refused()
times = {True: [], False: []}
for i in range(41):
    for confine in (True, False):
        started = time.perf_counter()
        with Worker(Spec(confine=confine), own) as worker:
            worker.wait_ready(120)
            if i:  # the first of each waits for the zygote's imports
                times[confine].append(time.perf_counter() - started)
own.close()
print(json.dumps([statistics.median(times[True]), statistics.median(times[False])]))
"""


def sandbox_cost() -> tuple[float, float]:
    """Median seconds from asking a warm zygote for a worker to its first message, confined and not."""
    done = subprocess.run([sys.executable, "-c", SANDBOX], cwd=ROOT, capture_output=True, text=True, check=True)
    return tuple(json.loads(done.stdout))


def timing_table(args) -> None:
    print("| problem | submission | grade cold (s) | re-grade after edit (s) | re-grade / cold | plain property test (s) | plain / grade cold | peak memory (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
    for slug in args.problems:
        for r in timing_rows(slug, args.runs, args.reference_only):
            print(f"| {r['problem']} | {r['submission']} | {r['cold']:.2f} | {r['regrade']:.2f} | "
                  f"{r['regrade'] / r['cold']:.0%} | {r['plain']:.2f} | {r['plain'] / r['cold']:.1f}× | {r['mem']:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
