"""``grade handout``: a copy of the exercises without ``solutions/`` that grades with the same verdicts.

A handout carries what it takes to judge, recorded from the full checkout, and nothing from which a
solution can be read off: for each problem a ``problems/<slug>/recorded.npz`` with

- the cases: the statement's examples, the inputs Hypothesis draws (the same every run: derandomised),
  and a pool of small inputs (more draws, and the input each known mistake shrinks to in the full
  checkout), smallest first;
- the reference's output on every case, and every known-wrong variant's (its message and relation, not
  its source), for naming mistakes;
- the reference's parameter tree at each signature, and the grading hooks' answers on each case.

Grading there (:class:`Recorded` stands in for :class:`grader.trusted.Trusted`) runs the learner's code
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

from grader import kinds, problems
from grader.problems import Problem

RECORD = "recorded.npz"
POOL_DRAWS = 4  # the pool draws this many times the problem's max_examples (before duplicates go)
MARKER = "HANDOUT.md"  # at a handout's root: problems/ without solutions/ is a checkout there
FORMAT = 1


def case_size(args: dict) -> tuple:
    """How big an input is, for "smallest first": array elements, then integer sizes, then magnitudes."""
    elements = sum(int(np.size(v)) for v in args.values() if isinstance(v, np.ndarray))
    integers = sum(abs(int(v)) for v in args.values() if isinstance(v, (int, np.integer)) and not isinstance(v, bool))
    magnitude = sum(float(np.abs(v).sum()) for v in args.values() if isinstance(v, np.ndarray) and v.dtype.kind in "fiu")
    return elements, integers, magnitude


# -- reading a record: the trusted side of a handout ---------------------------------------------------------

class _Hooks:
    """The grading hooks' ``borderline`` answers, as recorded (``accept_also`` is :meth:`Recorded.accept_also`)."""

    def __init__(self, recorded: Recorded):
        self.recorded = recorded

    def borderline(self, args: dict):
        found = self.recorded.arrays.get(f"border_{self.recorded.index.get(self.recorded.digest(args))}")
        return found if found is not None else np.zeros(self.recorded.problem.natural_shape(args), dtype=bool)


class Recorded:
    """The trusted side of a handout: every answer read from ``recorded.npz``, no reference to run. Its
    interface is the part of :class:`grader.trusted.Trusted` a learner's grading uses; anything outside
    the record is a :class:`grader.trusted.ReferenceError`."""

    recorded = True
    cache_folder = None
    worker = None
    deadline: float | None = None

    def __init__(self, problem: Problem):
        from grader.report import case_from_json

        self.problem = problem
        path = problem.folder / RECORD
        try:
            with np.load(path, allow_pickle=False) as data:
                self.arrays = {name: data[name] for name in data.files}
            meta = json.loads(self.arrays.pop("meta").tobytes())
            if meta.get("format") != FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, this grader reads {FORMAT}")
            self.cases = [case_from_json(problem, c) for c in meta["cases"]]
        except (OSError, ValueError, KeyError, TypeError, kinds.KindError) as exc:
            raise problems.ProblemError(f"problems/{problem.slug}/{RECORD} does not read: {exc}") from None
        self.index = {self.digest(args): i for i, args in enumerate(self.cases)}
        self.drawn = [self.cases[i] for i in meta["drawn"]]
        self.pool = [self.cases[i] for i in meta["pool"]]
        self.notes = {name: (note["message"], note.get("diagnosis"), note.get("stage", "values"))
                      for name, note in meta["pitfalls"].items()}
        self.trees = {("reference", signature): tree for signature, tree in meta["trees"].items()}
        self.hooks = _Hooks(self)
        self._check_against_statement()

    def _check_against_statement(self) -> None:
        """The recorded answers must give the outputs the statement prints: an edited record is a broken
        problem, never a verdict on the learner."""
        from grader.compare import agrees

        for ex in self.problem.examples:
            if ex.expected is None:
                continue
            got = self.cached("reference", ex.args)
            if got is None or not agrees(self.problem, ex.args, ex.expected.reshape(-1), got,
                                         self.accept_also(ex.args, got)):
                raise problems.ProblemError(f"problems/{self.problem.slug}/{RECORD} does not give the output the "
                                            f"statement prints for its example {ex.name!r}: it was changed after it "
                                            f"was recorded; write the handout again")

    def digest(self, args: dict) -> str:
        return kinds.args_digest(self.problem.args, args)

    def _missing(self, args: dict):
        from grader.trusted import ReferenceError

        return ReferenceError(f"this handout has no recorded answer for {self.problem.call_text(args)} "
                              f"(grade it in the full checkout)")

    def cached(self, key: str, args: dict, jit: bool = True) -> np.ndarray | None:
        return self.arrays.get(f"out_{key}_{self.index.get(self.digest(args))}")

    def output(self, key: str, args: dict) -> np.ndarray:
        found = self.cached(key, args)
        if found is None:
            raise self._missing(args)
        return found

    def outputs(self, key: str, cases: list[dict]) -> list[np.ndarray | None]:
        """Recorded outputs (a variant's is None where it raised); the reference's must all be there."""
        if key == "reference":
            return [self.output(key, args) for args in cases]
        return [self.cached(key, args) for args in cases]

    def prefetch(self, key: str, cases: list[dict]) -> None:
        pass

    def outputs_on(self, keys: list[str], args: dict, jit: bool = True,
                   share: bool = False) -> dict[str, np.ndarray | None]:
        return {key: self.cached(key, args) for key in keys}

    def collect(self, key: str, args: dict, timeout: float = 0) -> np.ndarray:
        return self.output(key, args)

    def request(self, key: str, args: dict, jit: bool = True) -> None:
        if self.cached(key, args) is None and key == "reference":
            raise self._missing(args)

    def request_batch(self, key: str, cases: list[dict]) -> None:
        for args in cases:
            self.request(key, args)

    def is_pending(self, key: str, args: dict) -> bool:
        return False

    def param_values(self, args: dict) -> None:
        return None  # a handout records no parameters: values drawn for another parameter go unsaid there

    def pitfalls(self) -> dict[str, tuple[str, str | None, str]]:
        return dict(self.notes)

    def accept_also(self, args: dict, expected: np.ndarray) -> np.ndarray | None:
        return self.arrays.get(f"accept_{self.index.get(self.digest(args))}")

    def capture(self, args: dict):
        from grader.trusted import ReferenceError

        raise ReferenceError("a handout does not carry the reference's modules")

    def start(self, modules=None):
        from grader.trusted import ReferenceError

        raise ReferenceError("a handout runs no trusted code")

    def acknowledge(self) -> None:
        pass

    def cancel_pending(self) -> None:
        pass

    def close(self) -> None:
        pass


# -- writing a record: in the full checkout ------------------------------------------------------------------

def draw(problem: Problem, max_examples: int) -> list[dict]:
    """The inputs Hypothesis draws for ``problem`` (derandomised) when it may draw ``max_examples``."""
    from grader.engine import run_generated

    class Drawing:  # run_generated only reads the problem while it collects
        pass

    drawing = Drawing()
    drawing.problem = replace(problem, max_examples=max_examples)
    drawn: list[dict] = []
    run_generated(drawing, [], collect=drawn)
    return drawn


def record(problem: Problem, say=lambda text: None) -> dict[str, np.ndarray]:
    """Everything a handout needs to grade ``problem``, as arrays for ``np.savez_compressed``."""
    from grader import diagnosis
    from grader.engine import Options, Session, grade
    from grader.report import case_to_json
    from grader.trusted import Trusted

    trusted = Trusted(problem, use_cache=True)
    variants = problem.variants("pitfalls")
    try:
        digest = trusted.digest
        examples = [ex.args for ex in problem.examples]
        drawn = draw(problem, problem.max_examples)
        pool = draw(problem, problem.max_examples * POOL_DRAWS)
        for name, path in variants.items():  # where each known mistake shrinks to in the checkout
            say(f"{problem.slug}: where {name} shrinks to")
            verdict = grade(problem, path, Options(), trusted=trusted, subject_key=f"pitfall_{name}", fixed=False)
            if verdict.counterexample is not None and verdict.counterexample.args:
                pool.append(verdict.counterexample.args)
        cases: dict[str, dict] = {}
        for args in examples + drawn + pool:
            cases.setdefault(digest(args), args)
        order = list(cases)
        index = {d: i for i, d in enumerate(order)}
        in_pool = sorted({digest(a) for a in pool} - {digest(a) for a in examples + drawn},
                         key=lambda d: case_size(cases[d]))
        everything = [cases[d] for d in order]
        arrays: dict[str, np.ndarray] = {}
        say(f"{problem.slug}: the reference on {len(everything)} inputs")
        for i, out in enumerate(trusted.outputs("reference", everything)):
            arrays[f"out_reference_{i}"] = out
        trusted.start({f"pitfall_{name}": path for name, path in variants.items()})
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
        notes = {name: dict(zip(("message", "diagnosis", "stage"), diagnosis.notes(path)))
                 for name, path in variants.items()}
        meta = {"format": FORMAT, "problem": problem.slug, "cases": [case_to_json(problem, a) for a in everything],
                "drawn": [index[digest(a)] for a in drawn], "pool": [index[d] for d in in_pool],
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
of a model alone (`--part`) needs the full project.

Problems: {slugs}
"""


def write(root: Path, out: Path, slugs: list[str], say=lambda text: None) -> None:
    """Write the handout of ``slugs`` from the checkout ``root`` into the new folder ``out``."""
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(root / "grader", staging / "grader", ignore=ignore)
    for name in ("pyproject.toml", "requirements.lock"):
        shutil.copy2(root / name, staging / name)
    for slug in slugs:
        problem = problems.load(root, slug)
        shutil.copytree(problem.folder, staging / "problems" / slug, ignore=ignore)
        arrays = record(problem, say)
        np.savez_compressed(staging / "problems" / slug / RECORD, **arrays)
        pristine = staging / ".grade" / "pristine"
        pristine.mkdir(parents=True, exist_ok=True)
        shutil.copy2(problem.stub, pristine / problem.stub.name)
    (staging / MARKER).write_text(HANDOUT_TEXT.format(first=slugs[0], slugs=", ".join(slugs)))
    staging.rename(out)


def main(argv: list[str]) -> int:
    """Instructors: `grade handout DIR [<problem> ...]` writes the exercises without their solutions to the
    new folder DIR (every problem, or those named); it grades with the same verdicts."""
    parser = argparse.ArgumentParser(prog="grade handout", description=main.__doc__)
    parser.add_argument("folder", type=Path, help="the new folder to write (it must not exist)")
    parser.add_argument("problems", nargs="*", help="the problems to include (default: all)")
    args = parser.parse_args(argv)
    try:
        root = problems.find_checkout("`grade handout`")
        slugs = [problems.load(root, slug).slug for slug in args.problems] or problems.slugs(root)
        if args.folder.exists():
            raise problems.UsageError(f"{args.folder} exists; a handout is written to a new folder")
    except (problems.UsageError, problems.ProblemError) as exc:
        print(f"grade: {exc}", file=sys.stderr)
        return 2
    tty = sys.stderr.isatty()
    say = (lambda text: print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)) if tty else (lambda text: None)
    try:
        write(root, args.folder.resolve(), slugs, say)
    except (problems.ProblemError, RuntimeError) as exc:
        print(f"\ngrade: the handout was not written: {exc}", file=sys.stderr)
        return 2
    if tty:
        print("\r\x1b[K", end="", file=sys.stderr)
    print(f"wrote {args.folder}: {len(slugs)} problem{'s' * (len(slugs) > 1)} without their solutions")
    return 0
