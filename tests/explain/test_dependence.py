"""Which output row depends on which input position (grader.explain.dependence), with both functions in
this process: the reference a running sum over x's rows (row i depends on positions 0..i), the learner's
as each test says."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from grader.core import kinds
from grader.core.verdict import Outcome, Status
from grader.explain.dependence import changed, dependence

ARGS = {"causal": True, "x": np.arange(12, dtype=np.float32).reshape(4, 3) / 10}


def causal_sum(args: dict) -> np.ndarray:
    return np.cumsum(args["x"], axis=0)


class FakeSession:
    def __init__(self, learner, positions=None, reference=causal_sum):
        self.problem = SimpleNamespace(positions={"x": 0} if positions is None else positions, rtol=1e-5, atol=1e-6,
                                       natural_shape=lambda args: list(args["x"].shape))
        digest = lambda args: kinds.args_digest({"causal": "bool", "x": "array:float32"}, args)  # noqa: E731
        self.asked: list = []
        self.trusted = SimpleNamespace(
            recorded=False, prefetch=lambda key, cases: None,
            outputs=lambda key, cases: [reference(a).reshape(-1) for a in cases], digest=digest)
        self.learner = learner

    def answers(self, cases):
        self.asked += cases
        return [self.learner(a).reshape(-1) for a in cases]


def diagnosed(learner, **kw):
    session = FakeSession(learner, **kw)
    outcome = Outcome("case", ARGS, Status.FAIL, "differs", comparison=SimpleNamespace(expected=causal_sum(ARGS)),
                      actual=learner(ARGS))
    return dependence(session, outcome), session


def test_rows_that_follow_later_positions_are_said_with_the_rule_they_break():
    found, session = diagnosed(lambda args: np.cumsum(args["x"][::-1], axis=0)[::-1])  # row i: positions i..3
    assert found.id == "dependence"
    assert ("your row 0 changes with positions 1, 2, 3, row 1 changes with positions 2, 3, row 2 changes with "
            "position 3 (each later than the row's own: the reference's row i depends on positions up to i "
            "only)") in found.message
    assert "your row 1 does not change with position 0, row 2 does not change with positions 0, 1" in found.message
    assert len(session.asked) == 4  # each position changed alone, once


def test_a_row_that_ignores_its_own_position_is_said_as_such():
    found, _ = diagnosed(lambda args: causal_sum(args) - args["x"])  # each row leaves out its own position
    assert found.message.endswith("your row 0 does not change with position 0, row 1 does not change with "
                                  "position 1, row 2 does not change with position 2, row 3 does not change "
                                  "with position 3 (the row's own position, on which the reference's row "
                                  "depends).")


def test_a_wrong_output_that_follows_the_same_positions_gets_nothing():
    assert diagnosed(lambda args: 2 * causal_sum(args))[0] is None


@pytest.mark.parametrize("positions", [{}, {"x": 2}])
def test_nothing_is_run_where_the_problem_names_no_positions_or_the_axis_is_not_there(positions):
    found, session = diagnosed(lambda args: np.cumsum(args["x"][::-1], axis=0)[::-1], positions=positions)
    assert found is None and session.asked == []


def test_changing_a_position_moves_floats_by_one_and_token_ids_to_another_valid_id():
    moved = changed(ARGS, "x", 0, 2)
    assert np.array_equal(moved["x"][2], ARGS["x"][2] + 1) and np.array_equal(np.delete(moved["x"], 2, 0),
                                                                               np.delete(ARGS["x"], 2, 0))
    ids = {"ids": np.array([0, 3, 5], np.int32)}
    assert changed(ids, "ids", 0, 0)["ids"].tolist() == [1, 3, 5]
    assert changed(ids, "ids", 0, 2)["ids"].tolist() == [0, 3, 4]
    assert ids["ids"].tolist() == [0, 3, 5]  # the input itself is left as it was


def test_a_handout_whose_record_has_no_answer_on_the_changed_inputs_runs_nothing():
    session = FakeSession(lambda args: np.cumsum(args["x"][::-1], axis=0)[::-1])
    session.trusted.recorded = True
    outcome = Outcome("case", ARGS, Status.FAIL, "differs", comparison=SimpleNamespace(expected=causal_sum(ARGS)),
                      actual=session.learner(ARGS))
    assert dependence(session, outcome) is None and session.asked == []
