"""A handout's trusted side (:class:`grader.grading.recorded.Recorded`): the answers read from ``recorded.npz``,
checked against the statement, and anything outside the record a broken problem, never a verdict."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from conftest import ROOT
from grader.grading import recorded
from grader.grading.errors import ReferenceError
from grader.problem import problems
from grader.problem.cases import case_to_json

SLUG = "t5_relative_pos"


def handout(tmp_path, edit=lambda arrays, meta: None):
    """A checkout of the problem with a record of the reference's outputs on its examples (the first of them
    drawn, the others the pool of small inputs); ``edit(arrays, meta)`` changes it before it is written."""
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part / SLUG, tmp_path / part / SLUG)
    problem = problems.load(tmp_path, SLUG)
    cases = [ex.args for ex in problem.examples]
    arrays = {f"out_reference_{i}": ex.expected.reshape(-1) for i, ex in enumerate(problem.examples)}
    meta = {"format": recorded.FORMAT, "cases": [case_to_json(problem, a) for a in cases], "drawn": [0],
            "pool": list(range(1, len(cases))), "pitfalls": {"x": {"message": "m", "stage": "values"}}, "trees": {}}
    edit(arrays, meta)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(problem.folder / recorded.RECORD, **arrays)
    return problem


def test_the_recorded_answers_stand_in_for_the_reference(tmp_path):
    problem = handout(tmp_path)
    record = recorded.Recorded(problem)
    ex = problem.examples[1]
    assert np.array_equal(record.output("reference", ex.args), ex.expected.reshape(-1))
    assert record.drawn == [problem.examples[0].args] and len(record.small_inputs) == len(problem.examples) - 1
    assert record.outputs("pitfall_x", [ex.args]) == [None]  # a variant that raised there, or was not recorded
    assert record.pitfalls() == {"x": ("m", None, "values")}


def test_an_input_outside_the_record_is_a_broken_problem_not_a_verdict(tmp_path):
    record = recorded.Recorded(handout(tmp_path))
    other = {"seed": 5, "T": 3, "num_buckets": 8, "max_distance": 20}
    with pytest.raises(ReferenceError, match="this handout has no recorded answer for t5_relative_pos"):
        record.request("reference", other)
    with pytest.raises(ReferenceError):
        record.capture(other)


@pytest.mark.parametrize("edit, said", [
    (lambda arrays, meta: arrays.update(out_reference_0=arrays["out_reference_0"] + 1), "does not give the output"),
    (lambda arrays, meta: meta.update(format=recorded.FORMAT + 1), "does not read: format"),
])
def test_a_record_changed_after_it_was_written_does_not_grade(tmp_path, edit, said):
    with pytest.raises(problems.ProblemError, match=said):
        recorded.Recorded(handout(tmp_path, edit))


def test_smaller_inputs_come_first():
    small, large = {"x": np.zeros(2), "n": 3}, {"x": np.zeros(5), "n": 1}
    assert recorded.case_size(small) < recorded.case_size(large)
    assert recorded.case_size({"x": np.ones(2), "n": 3}) > recorded.case_size(small)
