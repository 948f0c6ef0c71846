"""The parameters are part of the answer (:mod:`grader.grading.param_checks`): a tree report checked against
the moved outputs, values borne out by the reference's output on them, and the verdict a tree difference or a
contradicted report makes, with workers and a reference side faked in this process (:mod:`session_fakes`)."""

from __future__ import annotations

import numpy as np
import pytest

from grader.core import kinds
from grader.core.verdict import Status
from grader.grading import param_checks
from grader.grading.errors import ReferenceError
from grader.sandbox.operations import Reply, Tree
from session_fakes import CASES, VALUES, FakeWorker, answered, expected, moved_output
from session_fakes import clock, session, spares  # noqa: F401  (fixtures: the session, the clock and spare workers)


def test_values_the_outputs_do_not_bear_out_are_not_given(session):
    """A worker's report of its initial values is learner code's word: where the reference, run on them,
    does not give the learner's output, they explain nothing, and no parameter is named from them."""
    s = session(FakeWorker())
    s.trusted.substitute_gives = lambda args: expected(args) + 1
    s.ask_param_values(CASES[0])
    s.evaluate("case", CASES[0])
    assert s.param_values() is None
    [(args, values)] = s.trusted.substitutions
    assert args == CASES[0] and list(values) == ["params/w"] and np.array_equal(values["params/w"], VALUES["params/w"])


def test_values_that_are_the_reference_s_need_no_run_of_the_reference(session):
    """Values equal to the reference's name no parameter: they are given as they came, at no cost."""
    same = {"params/w": np.zeros((2, 3), np.float32)}
    s = session(FakeWorker(values=Tree("params", values=same)))
    s.ask_param_values(CASES[0])
    s.evaluate("case", CASES[0])
    graded, _ = s.param_values()
    assert graded is same and s.trusted.substitutions == []


# -- a worker's parameter tree, checked against its outputs ------------------------------------------------

TREE = {"params/w": [2, 3]}


def follows(args: dict) -> Reply:
    """An answer that follows every move of the parameters as the reference's does."""
    return answered(moved_output(args))


def ignores(args: dict) -> Reply:
    """An answer that does not change when the parameters move."""
    return answered(expected(args))


@pytest.mark.parametrize("reported, answer, said", [
    ({}, follows, "it reported no parameter `w` in your parameter tree, yet your output changes"),
    (None, follows, "it reported that your code creates no parameters that Flax makes, yet your output changes"),
    ({"params/w": [3, 2]}, follows, "it reported other shapes than the statement's for parameter `w`, yet with it "
                                    "moved your output is the reference's"),
], ids=["a parameter said missing", "no parameters at all", "a parameter said misshaped"])
def test_a_tree_report_the_moved_outputs_contradict_is_named(session, reported, answer, said):
    """What a worker says of its tree is checked against its outputs with the parameters moved, which the
    grader compares: a parameter said missing whose move changes the output is there after all."""
    s = session(FakeWorker(answer))
    s.parameters.tree_report = (TREE, reported)
    assert s.tree_contradiction(CASES[0]).startswith(said)


@pytest.mark.parametrize("reported, answer", [
    ({}, ignores), (None, ignores),
    ({"params/w": [3, 2]}, lambda args: answered(moved_output(args) + 3 * (kinds.moved(args) is not False))),
], ids=["a parameter missing", "no parameters at all", "a parameter misshaped"])
def test_a_tree_report_the_moved_outputs_bear_out_stands(session, reported, answer):
    """An honest report of a missing or misshaped parameter is never taken for a forgery: its moves do not
    change the output, or change it otherwise than the reference's."""
    s = session(FakeWorker(answer))
    s.parameters.tree_report = (TREE, reported)
    assert s.tree_contradiction(CASES[0]) is None


def test_a_tree_report_of_extra_parameters_alone_runs_nothing(session):
    """No output can show a parameter nothing uses, so a report of one is not checked, and costs no call."""
    learner = FakeWorker()
    s = session(learner)
    s.workers.ready()
    s.parameters.tree_report = (TREE, {**TREE, "params/extra": [3]})
    assert s.tree_contradiction(CASES[0]) is None
    assert learner.ops() == ["load"]


class Reported:
    """A session as :func:`grader.grading.param_checks.check_parameters` sees it: a tree report and what the outputs
    say against it."""

    def __init__(self, found, contradiction=None, unseen=False):
        self.found, self.contradiction, self.tree_unseen = found, contradiction, unseen

    def params_diff(self, args: dict):
        return self.found

    def tree_contradiction(self, args: dict):
        return self.contradiction


def verdict(status: Status):
    from grader.core.verdict import Verdict

    return Verdict("t5_relative_pos", status, "as the outputs say")


DIFFERENT = param_checks.tree_differences(TREE, {})


@pytest.mark.parametrize("found, unseen", [([], False), (DIFFERENT, False), (None, True), (None, False)],
                         ids=["the same tree", "another tree", "no tree", "no report"])
@pytest.mark.parametrize("status", [Status.FAIL, Status.ERROR])
def test_no_tree_report_turns_a_failing_run_into_a_pass(found, unseen, status):
    """The tree can only tell against the code: a failing run stays as its outputs made it."""
    v = verdict(status)
    param_checks.check_parameters(Reported(found, unseen=unseen), v, CASES[0])
    assert (v.status, v.message) == (status, "as the outputs say")


def test_a_tree_that_agrees_is_said_only_where_every_output_agrees():
    """Where outputs fail, the worker's word that its tree is the statement's is not repeated as the grader's:
    no output backs it (a parameter left out and one ignored fail alike)."""
    passing, failing = verdict(Status.PASS), verdict(Status.FAIL)
    param_checks.check_parameters(Reported([]), passing, CASES[0])
    param_checks.check_parameters(Reported([]), failing, CASES[0])
    assert [(c.name, c.status) for c in passing.checks] == [("parameters", Status.PASS)]
    assert failing.checks == []


def test_a_tree_report_the_outputs_contradict_makes_a_passing_run_an_error():
    """A malformed report is a clear verdict on the submission, as any malformed reply is."""
    v = verdict(Status.PASS)
    param_checks.check_parameters(Reported([], contradiction="it reported no parameter `w`"), v, CASES[0])
    assert v.status == Status.ERROR
    assert v.message == param_checks.MALFORMED_TREE + ": it reported no parameter `w`"


def test_a_tree_report_the_outputs_contradict_on_a_failing_run_is_said_and_not_used():
    """The run's failure stands on its outputs; a false report is named for what it is, and neither its
    differences nor its "no parameters" reach the explanation."""
    v = verdict(Status.FAIL)
    session = Reported(DIFFERENT, contradiction="it reported no parameter `w`", unseen=True)
    param_checks.check_parameters(session, v, CASES[0])
    assert (v.status, v.params_diff, session.tree_unseen) == (Status.FAIL, [], False)
    [check] = v.checks
    assert check.status == Status.WARN and check.message.endswith("; the grader does not use it")


class Unverifiable(Reported):
    """A session whose outputs for checking its report cannot be had (a handout records none on them)."""

    def tree_contradiction(self, args: dict):
        raise ReferenceError("this handout has no recorded answer for it")


def test_a_tree_difference_that_cannot_be_checked_against_outputs_still_fails_a_passing_run():
    """Checking a report against outputs may only take a claim away, never the verdict's ground: where it
    cannot run, the differences count as reported."""
    v = verdict(Status.PASS)
    param_checks.check_parameters(Unverifiable(DIFFERENT), v, CASES[0])
    assert v.status == Status.FAIL and v.params_diff == DIFFERENT
