"""What the engine concludes from a run's cases (:mod:`grader.grading.engine`): the verdict's message and jit
check, and a handout's stand-in for shrinking, with the session faked."""

from __future__ import annotations

from types import SimpleNamespace

from grader.core.verdict import Outcome, Status, Verdict
from grader.grading import engine


def run(cases: int, seen: bool = True, jit_error: str | None = None, jit: bool = True):
    return SimpleNamespace(cases=cases, seen=[1] if seen else [], jit_error=jit_error, options=SimpleNamespace(jit=jit))


def concluded(session, bad=None) -> Verdict:
    verdict = Verdict("t5_relative_pos", Status.PASS, "")
    engine.conclude(session, verdict, bad)
    return verdict


def test_a_pass_counts_its_cases_and_says_it_ran_under_jit():
    assert concluded(run(1)).message == "the 1 case matches the reference"
    verdict = concluded(run(14))
    assert verdict.message == "all 14 cases match the reference"
    assert [(c.name, c.status) for c in verdict.checks] == [("jit", Status.PASS)]
    assert concluded(run(14, jit=False)).checks == [] and concluded(run(14, seen=False)).checks == []


def test_a_failure_is_the_verdict_and_a_function_graded_eagerly_is_warned_of():
    bad = Outcome("case", {"T": 2}, Status.FAIL, "2 of 4 values differ")
    verdict = concluded(run(3, jit_error="ConcretizationTypeError"), bad)
    assert (verdict.status, verdict.message, verdict.counterexample) == (Status.FAIL, "2 of 4 values differ", bad)
    [check] = verdict.checks
    assert check.status == Status.WARN and "graded eagerly (ConcretizationTypeError)" in check.message


class Handout:
    """A session on a handout: the recorded pool of small inputs, each failing where ``fails`` says."""

    def __init__(self, pool: list[dict], fails):
        self.trusted = SimpleNamespace(small_inputs=pool)
        self.fails, self.evaluated, self.cancelled = fails, [], False

    def cancel_pending(self):
        self.cancelled = True

    def evaluate(self, name: str, args: dict) -> Outcome:
        self.evaluated.append(args)
        return Outcome(name, args, Status.FAIL if self.fails(args) else Status.PASS, "")


def test_a_handout_reports_the_smallest_recorded_input_that_fails_too_smaller_than_the_first():
    pool = [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 9}]
    first = Outcome("generated", {"n": 5}, Status.FAIL, "")
    session = Handout(pool, fails=lambda args: args["n"] >= 2)
    assert engine.smallest_failing(session, first).args == {"n": 2} and session.cancelled
    none_smaller = Handout(pool, fails=lambda args: args["n"] == 9)
    assert engine.smallest_failing(none_smaller, first) is first and {"n": 9} not in none_smaller.evaluated
