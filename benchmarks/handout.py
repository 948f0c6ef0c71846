"""What a handout loses against the full checkout, measured on the project's own known-wrong variants.

Writes a handout of the problems named (default: every problem) to a temporary folder, then grades every
known-wrong variant in both twice: as a learner meets it (fixed examples first) and on generated inputs
alone (where the checkout shrinks the first failing input with Hypothesis and the handout picks the
smallest failing input of its recorded pool). Prints, per problem: how many variants fail and are named
as themselves in each, and the size of the counterexample (array elements, then the integer arguments'
sum) in each. In the checkout a variant runs as `grade check` runs it (a trusted module: a variant that
overrides parts of the reference imports solutions/, which confined learner code cannot read); in the
handout it runs as a learner's file.

    .venv/bin/python benchmarks/handout.py [problem ...]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from functools import partial  # noqa: E402

from grader.explain import diagnosis
from grader.instructor import handout
from grader.problem import problems  # noqa: E402
from grader.problem import checkout
from grader.grading.engine import Options, grade  # noqa: E402


def verdicts(root: Path, slug: str, variants: dict[str, Path], fixed: bool) -> dict[str, tuple]:
    problem = problems.load(root, slug)
    in_checkout = root == ROOT
    found = {}
    for name, path in variants.items():
        verdict = grade(problem, path, Options(), fixed=fixed, extra=partial(diagnosis.explain, name_only=True),
                        subject_key=f"pitfall_{name}" if in_checkout else None)
        case = verdict.counterexample.args if verdict.counterexample is not None else None
        found[name] = (str(verdict.status), verdict.pitfall.id if verdict.pitfall else None,
                       handout.case_size(case)[:2] if case else None)
    return found


def main() -> None:
    slugs = sys.argv[1:] or checkout.slugs(ROOT)
    os.environ.setdefault("GRADE_CACHE_DIR", tempfile.mkdtemp(prefix="handout-bench-cache-"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "handout"
        started = time.perf_counter()
        handout.write(ROOT, out, slugs)
        print(f"handout of {len(slugs)} problems written in {time.perf_counter() - started:.0f} s")
        print("\n| problem | how | caught and named: checkout | handout | same counterexample size | "
              "sizes that differ (handout vs checkout) |")
        print("|---|---|---|---|---|---|")
        for slug in slugs:
            variants = problems.load(ROOT, slug).variants("pitfalls")
            for fixed, how in ((True, "as graded"), (False, "generated inputs alone")):
                full = verdicts(ROOT, slug, variants, fixed)
                hand = verdicts(out, slug, variants, fixed)
                named = [sum(v[0] == "fail" and v[1] == name for name, v in side.items()) for side in (full, hand)]
                same = sum(full[n][2] == hand[n][2] for n in variants)
                larger = [f"{n} {hand[n][2]} vs {full[n][2]}" for n in variants if hand[n][2] != full[n][2]]
                print(f"| {slug} | {how} | {named[0]} of {len(variants)} | {named[1]} of {len(variants)} | "
                      f"{same} of {len(variants)} | {'; '.join(larger) or 'none'} |", flush=True)


if __name__ == "__main__":
    main()
