"""A learner's loop, timed against another checkout in one run: pass and fail, cold and re-graded.

For each problem, from empty caches and no zygote: the reference graded cold, then again after an edit
(a passing re-grade); then a wrong submission graded cold (the first failure, explained), again after an
edit (the same failure re-graded: the whole grade, and the seconds until its verdict line is printed),
then another wrong submission in its place (another failure). Each sequence runs alternately from this
checkout and, with ``--baseline DIR`` (a git worktree of an earlier commit, say), from that one, several
runs each; the table gives medians and this / baseline, and the ratios the targets are stated in.
Machines here are shared: compare only within one run.

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
# Two wrong submissions of each problem, wrong on either side of a comparison: a known mistake (its first
# failure also names it), or a realistic one.
WRONG = {
    "t5_relative_pos": ("solutions/t5_relative_pos/pitfalls.toml:swapped_direction",
                        "tests/submissions/t5_relative_pos/log2_over_natural_log.py"),
    "rmsnorm": ("tests/submissions/rmsnorm/layernorm_mean_var.py", "tests/submissions/rmsnorm/bfloat16_round_trip.py"),
    "t5_attention": ("solutions/t5_attention/pitfalls.toml:scaled_scores",
                     "solutions/t5_attention/pitfalls.toml:softmax_over_queries"),
    "shaw_relative_attention": ("solutions/shaw_relative_attention/pitfalls.toml:no_clipping",
                                "solutions/shaw_relative_attention/pitfalls.toml:no_value_term"),
    "mini_t5_forward": ("tests/submissions/mini_t5_forward/no_ffn_residual.py",
                        "tests/submissions/mini_t5_forward/mask_sense_inverted.py"),
    "t5_forward": ("solutions/t5_forward/pitfalls.toml:scaled_attention", "solutions/t5_forward/pitfalls.toml:no_rescale"),
    "t5_causal_relative_pos": ("solutions/t5_causal_relative_pos/pitfalls.toml:bidirectional_rule",
                               "solutions/t5_causal_relative_pos/pitfalls.toml:halved_without_boost"),
    "t5_relative_bias": ("solutions/t5_relative_bias/pitfalls.toml:swapped_direction",
                         "tests/submissions/t5_relative_bias/rounded_log_position.py"),
    "rel_shift": ("solutions/rel_shift/pitfalls.toml:source_chapter_shift",
                  "solutions/rel_shift/pitfalls.toml:reversed_direction"),
    "transformer_xl_attention": ("solutions/transformer_xl_attention/pitfalls.toml:distance_key_minus_query",
                                 "tests/submissions/transformer_xl_attention/heads_split_interleaved.py"),
    "sinusoidal_pe": ("tests/submissions/sinusoidal_pe/halves_like_marian.py",
                      "tests/submissions/sinusoidal_pe/cached_table_sliced_from_zero.py"),
    "alibi_bias": ("tests/submissions/alibi_bias/query_minus_key.py", "tests/submissions/alibi_bias/slopes_over_all_heads.py"),
    "alibi_attention": ("solutions/alibi_attention/pitfalls.toml:naive_slopes",
                        "tests/submissions/alibi_attention/slopes_start_at_one.py"),
    "rope": ("solutions/rope/pitfalls.toml:negative_angle", "tests/submissions/rope/cache_table_first_rows.py"),
    "rope_attention": ("solutions/rope_attention/pitfalls.toml:interleaved_layout",
                       "tests/submissions/rope_attention/rotate_half_sign_swapped.py"),
    "rope_scaled_angles": ("solutions/rope_scaled_angles/pitfalls.toml:dynamic_last_position",
                           "tests/submissions/rope_scaled_angles/ntk_exponent_flipped.py"),
}


def wrong_file(slug: str, which: int) -> Path:
    where = WRONG[slug][which]
    if ":" not in where:
        return ROOT / where
    sys.path.insert(0, str(ROOT))
    from grader.problem import problems

    return problems.load(ROOT, slug).variants("pitfalls")[where.split(":")[1]]


def loop(checkout: Path, slug: str, path: Path, then: Path | None = None) -> list[float]:
    """Seconds of: a cold grade of ``path`` and its re-grade after an edit, from ``checkout``; with ``then``,
    the re-grade's seconds to its verdict line, and a grade of ``then`` in its place."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GRADE_CACHE_DIR=str(Path(tmp) / "cache"), NO_COLOR="1")
        work = Path(tmp) / f"{slug}.py"
        shutil.copy(path, work)
        cmd = [sys.executable, "-m", "grader.cli", slug, "--file", str(work)]
        grade = {"cmd": cmd, "env": env, "cwd": str(checkout)}
        steps = [grade, {"append": str(work), "text": "\n# an edit\n"}, {**grade, "first_line": then is not None}]
        if then is not None:
            steps += [{"copy": str(then), "to": str(work)}, grade]
        results, _ = measure_steps(steps)
    seconds = [r[0] for r in results]
    return seconds if then is None else [seconds[0], seconds[1], results[1][2], seconds[2]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to time alternately")
    parser.add_argument("--problems", nargs="*", default=list(WRONG))
    args = parser.parse_args()
    sides = {"this checkout": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"{args.runs} runs each, medians (s)\n")
    columns = ["cold pass", "re-grade, pass", "first failure", "re-grade, same failure", "to its verdict line",
               "another failure"]
    print("| problem | checkout | " + " | ".join(columns) + " | fail / pass re-grade | verdict line / pass re-grade |"
          " first failure / cold pass |")
    print("|---|---|" + "---|" * (len(columns) + 3))
    for slug in args.problems:
        times = {side: [[] for _ in columns] for side in sides}
        for _ in range(args.runs):
            for side, checkout in sides.items():
                passing = loop(checkout, slug, ROOT / "solutions" / slug / f"{slug}.py")
                failing = loop(checkout, slug, wrong_file(slug, 0), wrong_file(slug, 1))
                for i, seconds in enumerate(passing + failing):
                    times[side][i].append(seconds)
        medians = {side: [statistics.median(t) for t in times[side]] for side in sides}
        for side in sides:
            m = medians[side]
            targets = [m[3] / m[1], m[4] / m[1], m[2] / m[0]]
            print(f"| {slug} | {side} | " + " | ".join(f"{x:.2f}" for x in m) + " | "
                  + " | ".join(f"{r:.2f}x" for r in targets) + " |", flush=True)
        if args.baseline:
            ratios = [a / b for a, b in zip(medians["this checkout"], medians["baseline"])]
            print(f"| {slug} | this / baseline | " + " | ".join(f"{r:.0%}" for r in ratios) + " | | | |", flush=True)


if __name__ == "__main__":
    main()
