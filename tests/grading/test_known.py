"""What the trusted side knows before it runs anything (:class:`grader.grading.known.Known`): the statement's and
golden.json's outputs, by input, and golden.json's outputs of the known mistakes, by the source they came from."""

from __future__ import annotations

import numpy as np

from conftest import ROOT
from grader.grading.known import Known
from grader.problem import problems

PROBLEM = problems.load(ROOT, "rmsnorm")


def test_the_statement_s_outputs_agree_with_themselves_and_another_output_is_named_a_disagreement():
    known = Known(PROBLEM, PROBLEM.hooks())
    ex = next(ex for ex in PROBLEM.examples if ex.expected is not None)
    digest = known.digest(ex.args)
    assert known.disagreement(digest, ex.expected.reshape(-1)) is None
    assert known.disagreement(digest, ex.expected.reshape(-1) + 1) == f"the statement's example {ex.name!r}"
    assert known.disagreement(digest, ex.expected.reshape(-1)[:-1]) is not None  # another shape
    assert known.disagreement("not a known input", ex.expected.reshape(-1) + 1) is None


def test_golden_outputs_of_a_known_mistake_are_given_only_for_the_source_they_came_from():
    known = Known(PROBLEM, PROBLEM.hooks())
    (source, digest, output), *_ = known.pitfalls["ignores_gamma"]
    found = known.pitfall_outputs("ignores_gamma", source)
    assert len(found) == 3 and found[0][0] == digest and np.array_equal(found[0][1], output)
    assert known.pitfall_outputs("ignores_gamma", "another source") == []
    assert known.pitfall_outputs("no such mistake", source) == []
