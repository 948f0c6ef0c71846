"""``grade handout``: a copy of the exercises without ``solutions/`` that grades with the same verdicts.

A handout carries what it takes to judge, recorded from the full checkout, and nothing from which a
solution can be read off: for each problem a ``problems/<slug>/recorded.npz`` with

- the cases: the statement's examples, the inputs Hypothesis draws (the same every run: derandomised),
  and a pool of small inputs (more draws, and the input each known mistake shrinks to in the full
  checkout), smallest first;
- the reference's output on every case, and every known-wrong variant's (its message and relation, not
  its source), for naming mistakes;
- the reference's parameter tree at each signature, and the grading hooks' answers on each case.

Grading there (:class:`Recorded` stands in for :class:`grader.grading.trusted.Trusted`) runs the learner's code
exactly as in the checkout. Where the checkout shrinks a failing drawn input with Hypothesis, which needs
the reference on inputs nobody recorded, a handout shows the smallest case of the pool that fails. What
it cannot do: grade one part of a model alone (`--part`), or say which part of a model goes wrong first
(both run the reference's own modules).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from grader.core.exits import Exit, usage_error
from grader.core import kinds
from grader.problem import checkout, pristine, problems
from grader.problem.problems import Problem
from grader.grading.recorded import FORMAT, RECORD, case_size
from grader.commands.learner import HANDOUT_PART_NOTE

SMALL_DRAWS = 4  # the small inputs (the record's "pool") are drawn this many times max_examples, before duplicates go
MARKER = "HANDOUT.md"  # at a handout's root: problems/ without solutions/ is a checkout there


# -- writing a record: in the full checkout ------------------------------------------------------------------

def draw(problem: Problem, max_examples: int) -> list[dict]:
    """The inputs Hypothesis draws for ``problem`` (derandomised) when it may draw ``max_examples``."""
    from grader.grading.engine import run_generated

    class Drawing:  # run_generated only reads the problem while it collects
        pass

    drawing = Drawing()
    drawing.problem = replace(problem, max_examples=max_examples)
    drawn: list[dict] = []
    run_generated(drawing, [], collect=drawn)
    return drawn


def record(problem: Problem, say=lambda text: None) -> dict[str, np.ndarray]:
    """Everything a handout needs to grade ``problem``, as arrays for ``np.savez_compressed``."""
    from grader.problem import variant
    from grader.grading.engine import Options, Session, grade
    from grader.problem.cases import case_to_json
    from grader.grading.trusted import Trusted

    trusted = Trusted(problem, use_cache=True)
    variants = problem.variants("pitfalls")
    try:
        digest = trusted.digest
        examples = [ex.args for ex in problem.examples]
        drawn = draw(problem, problem.max_examples)
        small = draw(problem, problem.max_examples * SMALL_DRAWS)
        for name, path in variants.items():  # where each known mistake shrinks to in the checkout
            say(f"{problem.slug}: where {name} shrinks to")
            verdict = grade(problem, path, Options(), trusted=trusted, subject_key=f"pitfall_{name}", fixed=False)
            if verdict.counterexample is not None and verdict.counterexample.args:
                small.append(verdict.counterexample.args)
        cases: dict[str, dict] = {}
        for args in examples + drawn + small:
            cases.setdefault(digest(args), args)
        order = list(cases)
        index = {d: i for i, d in enumerate(order)}
        small_only = sorted({digest(a) for a in small} - {digest(a) for a in examples + drawn},
                         key=lambda d: case_size(cases[d]))
        everything = [cases[d] for d in order]
        arrays: dict[str, np.ndarray] = {}
        say(f"{problem.slug}: the reference on {len(everything)} inputs")
        for i, out in enumerate(trusted.outputs("reference", everything)):
            arrays[f"out_reference_{i}"] = out
        trusted.register({f"pitfall_{name}": path for name, path in variants.items()})
        for name in variants:
            say(f"{problem.slug}: {name} on {len(everything)} inputs")
            for i, out in enumerate(trusted.outputs(f"pitfall_{name}", everything)):
                if out is not None:
                    arrays[f"out_pitfall_{name}_{i}"] = out
        for i, args in enumerate(everything):
            accepted = trusted.accept_also(args, arrays[f"out_reference_{i}"])
            if accepted is not None:
                arrays[f"accept_{i}"] = np.asarray(accepted)
            hook = getattr(trusted.hooks, "borderline", None)
            if hook is not None:
                arrays[f"border_{i}"] = np.asarray(hook(args), dtype=bool)
        trees = {}
        if problem.parts():
            session = Session(problem, problem.reference, Options(), trusted, subject_key="reference")
            for args in everything:
                signature = repr(kinds.signature(problem.args, kinds.with_moved(args, False)))
                if signature not in trees:
                    session.params_diff(args)
                    trees[signature] = trusted.trees.get(("reference", signature))
        notes = {name: dict(zip(("message", "diagnosis", "stage"), variant.notes(path)))
                 for name, path in variants.items()}
        meta = {"format": FORMAT, "problem": problem.slug, "cases": [case_to_json(problem, a) for a in everything],
                "drawn": [index[digest(a)] for a in drawn], "pool": [index[d] for d in small_only],
                "pitfalls": notes, "trees": {s: t for s, t in trees.items() if t}}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        return arrays
    finally:
        trusted.close()


HANDOUT_TEXT = """# Exercises (handout)

This copy has the problems without their solutions. Set up and grade as in the full project:

```sh
python3 -m venv .venv && .venv/bin/pip install -q -c requirements.lock -e . && .venv/bin/grade {first}
```

`grade` judges your code against answers recorded from the reference solutions
(`problems/<problem>/recorded.npz`): the same fixed examples and generated inputs, the same verdicts and
named mistakes. Where the full project shrinks a failing generated input to the smallest one that still
fails, a handout shows the smallest failing input from a recorded pool of small inputs. Grading one part
of a model alone (`--part`), the report's first wrong part and its check of which input positions each
output row follows need the full project: they run the reference on inputs nobody recorded.

Problems: {slugs}
"""


def handout_statement(text: str) -> str:
    """A statement as a handout carries it: where it suggests what needs the reference's modules (`--part`,
    the first wrong part), it says what the handout does instead."""
    if "--part" in text or "first wrong part" in text:
        return text.rstrip("\n") + f"\n\n> {HANDOUT_PART_NOTE}\n"
    return text


# What a learner's own repository of the handout leaves out: the environment, caches, compiled files.
GITIGNORE = ".venv/\n__pycache__/\n.grade/cache/\n.hypothesis/\n"


def write(root: Path, out: Path, slugs: list[str], say=lambda text: None,
          stubs: dict[str, bytes] | None = None) -> None:
    """Write the handout of ``slugs`` from the checkout ``root`` into the new folder ``out``, each problem's
    stub the untouched one (``stubs``, as :func:`grader.problem.pristine.handed_out` finds them)."""
    stubs = stubs or pristine.handed_out(root, slugs, checkout.cache_folder(root))
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.bak-*")  # (a reset's backups: solved files)
    shutil.copytree(root / "grader", staging / "grader", ignore=ignore)
    for name in ("pyproject.toml", "requirements.lock"):
        shutil.copy2(root / name, staging / name)
    for slug in slugs:
        problem = problems.load(root, slug)
        shutil.copytree(problem.folder, staging / "problems" / slug, ignore=ignore)
        statement = staging / "problems" / slug / "README.md"
        statement.write_text(handout_statement(statement.read_text()))
        arrays = record(problem, say)
        np.savez_compressed(staging / "problems" / slug / RECORD, **arrays)
        kept = staging / pristine.KEPT
        kept.mkdir(parents=True, exist_ok=True)
        for path in (staging / "problems" / slug / problem.stub.name, kept / problem.stub.name):
            path.write_bytes(stubs[slug])
    text = HANDOUT_TEXT.format(first=slugs[0], slugs=", ".join(slugs))
    (staging / MARKER).write_text(text)
    (staging / "README.md").write_text(text)  # the one pyproject.toml names
    (staging / ".gitignore").write_text(GITIGNORE)
    staging.rename(out)


def main(argv: list[str]) -> int:
    """Instructors: `grade handout DIR [<problem> ...]` writes the exercises without their solutions to the
    new folder DIR (every problem, or those named); it grades with the same verdicts."""
    parser = argparse.ArgumentParser(prog="grade handout", description=main.__doc__)
    parser.add_argument("folder", type=Path, help="the new folder to write (it must not exist)")
    parser.add_argument("problems", nargs="*", help="the problems to include (default: all)")
    args = parser.parse_args(argv)
    try:
        root = checkout.find_checkout("`grade handout`")
        slugs = [problems.load(root, slug).slug for slug in args.problems] or checkout.slugs(root)
        if args.folder.exists():
            raise problems.UsageError(f"{args.folder} exists; a handout is written to a new folder")
        stubs = pristine.handed_out(root, slugs, checkout.cache_folder(root),
                                    lambda sentence: print(f"grade handout: {sentence}", file=sys.stderr))
    except (problems.UsageError, problems.ProblemError, ValueError) as exc:
        return usage_error(str(exc))
    tty = sys.stderr.isatty()
    say = (lambda text: print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)) if tty else (lambda text: None)
    try:
        write(root, args.folder.resolve(), slugs, say, stubs)
    except (problems.ProblemError, RuntimeError) as exc:
        print(file=sys.stderr)
        return usage_error(f"the handout was not written: {exc}")
    if tty:
        print("\r\x1b[K", end="", file=sys.stderr)
    print(f"wrote {args.folder}: {len(slugs)} problem{'s' * (len(slugs) > 1)} without "
          f"{'their solutions' if len(slugs) > 1 else 'its solution'}")
    return Exit.OK
