"""A handout's trusted side: the answers recorded from the full checkout, in place of the reference.

``problems/<slug>/recorded.npz`` (written by :mod:`grader.instructor.handout`) holds the cases, the reference's output
on each, every known-wrong variant's, the reference's parameter trees and the grading hooks' answers.
:class:`Recorded` stands in for :class:`grader.grading.trusted.Trusted` with them: the learner's code runs exactly
as in the checkout; what needs the reference on inputs nobody recorded (shrinking, `--part`, the first
wrong part of a model) is not done.
"""

from __future__ import annotations

import json

import numpy as np

from grader.core import kinds
from grader.grading.errors import ReferenceError
from grader.problem import problems
from grader.problem.problems import Problem

RECORD = "recorded.npz"
FORMAT = 1


def case_size(args: dict) -> tuple:
    """How big an input is, for "smallest first": array elements, then integer sizes, then magnitudes."""
    elements = sum(int(np.size(v)) for v in args.values() if isinstance(v, np.ndarray))
    integers = sum(abs(int(v)) for v in args.values() if isinstance(v, (int, np.integer)) and not isinstance(v, bool))
    magnitude = sum(float(np.abs(v).sum()) for v in args.values() if isinstance(v, np.ndarray) and v.dtype.kind in "fiu")
    return elements, integers, magnitude


class _Hooks:
    """The grading hooks' ``borderline`` answers, as recorded (``accept_also`` is :meth:`Recorded.accept_also`)."""

    def __init__(self, recorded: Recorded):
        self.recorded = recorded

    def borderline(self, args: dict):
        found = self.recorded.arrays.get(f"border_{self.recorded.index.get(self.recorded.digest(args))}")
        return found if found is not None else np.zeros(self.recorded.problem.natural_shape(args), dtype=bool)


class Recorded:
    """The trusted side of a handout: every answer read from ``recorded.npz``, no reference to run. Its
    interface is the part of :class:`grader.grading.trusted.Trusted` a learner's grading uses; anything outside
    the record is a :class:`grader.grading.errors.ReferenceError`."""

    recorded = True
    cache_folder = None

    def __init__(self, problem: Problem):
        from grader.problem.cases import case_from_json

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
        self.small_inputs = [self.cases[i] for i in meta["pool"]]
        self.notes = {name: (note["message"], note.get("diagnosis"), note.get("stage", "values"))
                      for name, note in meta["pitfalls"].items()}
        self.trees = {("reference", signature): tree for signature, tree in meta["trees"].items()}
        self.hooks = _Hooks(self)
        self._check_against_statement()

    def limit(self, deadline: float | None) -> None:
        """Nothing here waits: every answer is read from the record."""

    def _check_against_statement(self) -> None:
        """The recorded answers must give the outputs the statement prints: an edited record is a broken
        problem, never a verdict on the learner."""
        from grader.core.compare import agrees

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
        raise ReferenceError("a handout does not carry the reference's modules")

    def start(self, modules=None):
        raise ReferenceError("a handout runs no trusted code")

    def acknowledge(self) -> None:
        pass

    def cancel_pending(self) -> None:
        pass

    def close(self) -> None:
        pass
