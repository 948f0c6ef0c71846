"""A constant factor that a failing output with copied rows cannot show alone, found on another failing
output of the run with the same sizes (grader.explain.diagnosis.factor_elsewhere), with a fake session."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from grader.core import kinds
from grader.core.compare import compare
from grader.core.verdict import Outcome, Status
from grader.explain import diagnosis

ARGS = {"ids": "array:int32", "width": "int"}
TABLE = np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32)


def reference(args: dict) -> np.ndarray:
    return TABLE[args["ids"]] * args["width"] / 6  # one row per id: equal ids give equal rows


class FakeSession:
    def __init__(self, learner, seen_ids):
        self.problem = SimpleNamespace(args=ARGS, exact=False, rtol=1e-4, atol=1e-5,
                                       natural_shape=lambda args: [len(args["ids"]), 6])
        digest = lambda args: kinds.args_digest(ARGS, args)  # noqa: E731
        self.trusted = SimpleNamespace(
            digest=digest, cached=lambda key, args: reference(args).reshape(-1),
            agrees=lambda args, e, a: bool(np.allclose(a, e, rtol=1e-4, atol=1e-5)))
        cases = [{"ids": np.array(ids, np.int32), "width": 6} for ids in seen_ids]
        self.seen = [(args, learner(args).reshape(-1)) for args in cases]


def failing(learner, ids=(0, 0, 0)) -> Outcome:
    args = {"ids": np.array(ids, np.int32), "width": 6}
    expected, actual = reference(args).reshape(-1), learner(args).reshape(-1)
    comparison = compare(expected_flat=expected, natural_shape=[len(ids), 6], dtype="float32",
                         result={"type": "array", "dtype": "float32"}, spec={"dtype": "float32", "shape": [len(ids) * 6]},
                         actual=actual, exact=False, rtol=1e-4, atol=1e-5, accept_also=None)
    assert comparison.stage == "values"
    return Outcome("generated", args, Status.FAIL, comparison.message, comparison=comparison, actual=actual)


def scaled(args: dict) -> np.ndarray:
    return reference(args) * 1.7


def test_copied_rows_alone_say_nothing_and_another_input_of_the_same_sizes_shows_the_factor():
    outcome = failing(scaled)
    assert diagnosis.diagnose(FakeSession(scaled, []), outcome.args, outcome.comparison.expected,
                              outcome.comparison.actual) is None  # one row repeated: a per-row norm fits too
    found = diagnosis.relation(FakeSession(scaled, [(0, 0, 0), (1, 2, 3)]), outcome)
    assert found.id == "constant_factor" and "1.7 times the expected one" in found.message
    assert found.message.endswith("the input shown gives the same factor.)")


def test_a_factor_elsewhere_that_does_not_hold_on_the_input_shown_says_nothing():
    def per_input(args):  # scaled by a quantity of the input, not by a constant
        return reference(args) * (1.5 + 0.1 * int(args["ids"].sum()))

    assert diagnosis.relation(FakeSession(per_input, [(1, 2, 3)]), failing(per_input)) is None


def test_other_sizes_are_no_evidence():
    session = FakeSession(scaled, [(1, 2, 3)])
    session.seen = [({**args, "width": 4}, out) for args, out in session.seen]
    assert diagnosis.relation(session, failing(scaled)) is None
