"""How a grading session asks each case of the graded module's side and the reference's, compares and counts
it, and answers diagnosis, with workers and a reference side faked in this process (:mod:`session_fakes`)."""

from __future__ import annotations

import numpy as np
import pytest

from grader.core.verdict import Status
from grader.grading import workers
from grader.sandbox.operations import Reply, Result, Returned
from grader.sandbox.pool import WorkerFailure
from session_fakes import (CALL_SECONDS, CASES, CRASH, PROBLEM_SECONDS, FakeWorker, answered, case, expected, on,
                           raised, right, statuses, wrong)
from session_fakes import clock, session, spares  # noqa: F401  (fixtures: the session, the clock and spare workers)


# -- one batch, answers matched to their cases ---------------------------------------------------------


def test_a_batch_goes_out_once_in_order_and_each_answer_reaches_its_own_case(session):
    learner = FakeWorker()
    s = session(learner)
    s.prefetch(CASES + [case(1)])
    assert learner.ops() == ["load", "batch"] and learner.batches() == [CASES]  # each case once, in order
    assert s.trusted.batches == [CASES]
    assert statuses(s, [CASES[2], CASES[0], CASES[3], CASES[1]]) == [Status.PASS] * 4
    assert learner.ops() == ["load", "batch"]  # every answer came from the batch
    assert s.cases == 4 and not s.workers.memo


def test_only_the_reference_outputs_not_kept_are_asked_for(session):
    s = session(FakeWorker(), kept=[CASES[0], CASES[2]])
    s.prefetch(CASES)
    assert s.trusted.batches == [[CASES[1], CASES[3]]]
    assert statuses(s, CASES) == [Status.PASS] * 4


def test_a_wrong_answer_fails_its_own_case_only(session):
    s = session(FakeWorker(on(CASES[2], wrong)))
    s.prefetch(CASES)
    assert statuses(s, CASES) == [Status.PASS, Status.PASS, Status.FAIL, Status.PASS]


@pytest.mark.parametrize("alone, status, calls", [(right, Status.PASS, 1), (wrong, Status.FAIL, 1),
                                                  (None, Status.FAIL, 0)],
                         ids=["right alone", "wrong alone too", "not traced together"])
def test_a_failure_of_answers_traced_together_is_confirmed_alone(session, alone, status, calls):
    together = (lambda args: answered(expected(args) + 0.5, together=True)) if alone else wrong
    learner = FakeWorker(on(CASES[1], together), single=alone)
    s = session(learner)
    s.prefetch(CASES[:2])
    assert statuses(s, CASES[:2]) == [Status.PASS, status]
    assert learner.calls() == [CASES[1]] * calls
    assert s.cases == 2  # the case counts once


# -- a case that fails, a worker that fails --------------------------------------------------------------


def test_an_error_on_one_case_is_that_case_s_verdict_and_the_rest_go_on(session):
    learner = FakeWorker(on(CASES[1], raised()))
    s = session(learner)
    s.prefetch(CASES)
    outcomes = [s.evaluate("case", args) for args in CASES]
    assert [o.status for o in outcomes] == [Status.PASS, Status.ERROR, Status.PASS, Status.PASS]
    assert outcomes[1].message == "ValueError in your function: boom (your file)" and outcomes[1].args == CASES[1]
    assert learner.ops() == ["load", "batch"]


@pytest.mark.parametrize("kind, at, status", [("memory", 1, Status.ERROR), ("exit", 1, Status.ERROR),
                                              ("signature", 1, Status.ERROR),
                                              ("not_implemented", 0, Status.NOT_STARTED)])
def test_an_error_that_no_other_case_could_pass_ends_the_run(session, kind, at, status):
    s = session(FakeWorker(on(CASES[at], raised(kind))))
    s.prefetch(CASES)
    assert statuses(s, CASES[:at]) == [Status.PASS] * at
    with pytest.raises(workers.StopGrading) as stop:
        s.evaluate("case", CASES[at])
    assert (stop.value.outcome.status, stop.value.outcome.args) == (status, CASES[at])


def test_not_implemented_after_a_case_ran_is_an_error_of_that_case(session):
    s = session(FakeWorker(on(CASES[1], raised("not_implemented"))))
    s.prefetch(CASES)
    assert statuses(s, CASES) == [Status.PASS, Status.ERROR, Status.PASS, Status.PASS]


@pytest.mark.parametrize("failure, status, message", [
    (CRASH, Status.ERROR, "the process running your code stopped: the process died on signal SIGSEGV"),
    (WorkerFailure("killed", "killed (SIGKILL)"), Status.ERROR,
     "the process running your code stopped: killed (SIGKILL)"),
    (WorkerFailure("memory", "out of memory"), Status.ERROR,
     "your code exceeded the memory limit of 3072 MiB (out of memory)"),
    (WorkerFailure("protocol", "bad"), Status.ERROR, "the process running your code broke the grader's protocol: bad"),
    (WorkerFailure("isolation", "learner code could not be isolated"), Status.ERROR,
     "learner code could not be isolated"),
    (WorkerFailure("timeout", "no answer within 20 s"), Status.TIMEOUT,
     "your function did not return within 20 s (the limit for one call); is there an endless loop?"),
], ids=lambda v: v.kind if isinstance(v, WorkerFailure) else None)
def test_a_worker_that_fails_on_the_first_case_of_its_batch_ends_the_run_on_that_case(session, spares, failure,
                                                                                     status, message):
    spares.append(FakeWorker())  # (not to be started: the failing case is known)
    s = session(FakeWorker(on(CASES[0], failure)))
    s.prefetch(CASES)
    with pytest.raises(workers.StopGrading) as stop:
        s.evaluate("case", CASES[0])
    assert (stop.value.outcome.status, stop.value.outcome.message, stop.value.outcome.args) == (status, message,
                                                                                              CASES[0])
    assert len(spares) == 1


def test_a_worker_that_dies_partway_through_a_batch_is_replaced_and_asked_case_by_case(session, spares):
    first, fresh = FakeWorker(on(CASES[1], CRASH)), FakeWorker()
    spares.append(fresh)
    s = session(first)
    s.prefetch(CASES)
    assert statuses(s, CASES) == [Status.PASS] * 4
    assert first.closed and s.workers.first is fresh
    assert fresh.ops() == ["load", "call", "call", "call"] and fresh.calls() == CASES[1:]
    assert fresh.waits[0][0] == "load"  # loaded before it is asked anything


def test_a_case_that_kills_the_fresh_worker_too_ends_the_run_on_it(session, spares):
    spares.append(FakeWorker(on(CASES[1], CRASH)))
    s = session(FakeWorker(on(CASES[1], CRASH)))
    s.prefetch(CASES)
    assert statuses(s, CASES[:1]) == [Status.PASS]
    with pytest.raises(workers.StopGrading) as stop:
        s.evaluate("case", CASES[1])
    assert stop.value.outcome.args == CASES[1] and "SIGSEGV" in stop.value.outcome.message
    assert not spares  # one restart, no more


@pytest.mark.parametrize("load, status, message", [
    (raised("not_implemented", "import"), Status.NOT_STARTED, "your function still raises NotImplementedError"),
    (raised("exception", "import"), Status.ERROR, "ValueError while importing your file: boom"),
    (CRASH, Status.ERROR, "the process running your code stopped"),
], ids=["not implemented", "raises", "dies"])
def test_a_file_that_does_not_load_ends_the_run_before_any_case(session, load, status, message):
    learner = FakeWorker(load=load)
    s = session(learner)
    with pytest.raises(workers.StopGrading) as stop:
        s.prefetch(CASES)
    assert (stop.value.outcome.name, stop.value.outcome.status) == ("loading your file", status)
    assert stop.value.outcome.message.startswith(message)
    assert learner.ops() == ["load"]


# -- the time limits ---------------------------------------------------------------------------------------


def test_each_wait_is_cut_to_the_time_left(session, clock):
    learner = FakeWorker()
    s = session(learner)
    s.prefetch(CASES)
    assert learner.waits[-1][:2] == ("load", CALL_SECONDS) and learner.waits[-1][3] == PROBLEM_SECONDS
    clock.now += PROBLEM_SECONDS - 5
    s.evaluate("case", CASES[0])
    assert learner.waits[-1][:2] == ("batch", 5) and learner.waits[-1][3] == 5


def test_past_the_deadline_nothing_more_is_awaited_and_the_run_ends_on_time(session, clock):
    learner = FakeWorker()
    s = session(learner)
    s.prefetch(CASES)
    waits = len(learner.waits)
    clock.now += PROBLEM_SECONDS + 1
    with pytest.raises(workers.StopGrading) as stop:
        s.evaluate("case", CASES[0])
    assert stop.value.outcome.status == Status.TIMEOUT
    assert stop.value.outcome.message == "grading ran past the limit of 60 s for the whole problem"
    assert len(learner.waits) == waits


def test_a_call_that_times_out_as_the_run_s_time_ends_is_the_run_s_timeout(session, clock):
    timeout = WorkerFailure("timeout", "no answer within 20 s")
    s = session(FakeWorker(on(CASES[0], clock.at(PROBLEM_SECONDS + 1, timeout))))
    s.prefetch(CASES)
    with pytest.raises(workers.StopGrading) as stop:
        s.evaluate("case", CASES[0])
    assert stop.value.outcome.status == Status.TIMEOUT and "for the whole problem" in stop.value.outcome.message
    assert stop.value.outcome.args == CASES[0]


def test_the_reference_side_waits_within_the_run_s_deadline_until_the_run_ends(session, clock):
    s = session(FakeWorker())
    assert s.trusted.deadline == clock.now + PROBLEM_SECONDS == s.clock.deadline
    s.close()  # a reference side the run was given outlives it, with no limit of the run's
    assert s.trusted.deadline is None


# -- answers for diagnosis -------------------------------------------------------------------------------


def doubled(args: dict) -> Reply:
    return answered(expected(args) * 2)


def test_answers_reuse_the_outputs_seen_and_ask_the_rest_in_one_batch(session):
    learner = FakeWorker(doubled)
    s = session(learner)
    s.prefetch(CASES[:1])
    assert statuses(s, CASES[:1]) == [Status.FAIL]
    got = s.answers([CASES[0], CASES[1], CASES[2], CASES[1]])
    assert learner.batches()[-1] == [CASES[1], CASES[2]]
    assert [g.tolist() for g in got] == [(expected(a) * 2).tolist() for a in [CASES[0], CASES[1], CASES[2], CASES[1]]]


def test_answers_stop_at_a_worker_that_fails_and_leave_the_rest_unknown(session, spares):
    learner, fresh = FakeWorker(on(CASES[2], CRASH, doubled)), FakeWorker()
    spares.append(fresh)  # what asks the learner's code anything after this (a first wrong part) gets a live worker
    s = session(learner)
    s.prefetch(CASES[:1])
    assert statuses(s, CASES[:1]) == [Status.FAIL]
    got = s.answers(CASES)
    assert learner.batches()[-1] == CASES[1:]
    assert [g is None for g in got] == [False, False, True, True]
    assert np.array_equal(got[1], expected(CASES[1]) * 2)
    assert learner.closed and s.workers.first is fresh and fresh.calls() == []  # nothing more asked of it here


def test_a_case_outside_the_batch_waits_for_the_batch_to_stop_and_is_asked_of_both_sides(session):
    learner = FakeWorker()
    s = session(learner)
    s.prefetch(CASES)
    assert statuses(s, [CASES[0], case(9, T=3)]) == [Status.PASS] * 2
    assert learner.ops() == ["load", "batch", "cancel", "call"] and learner.calls() == [case(9, T=3)]
    assert s.trusted.asked == [case(9, T=3)]


# -- what a worker's reply says is checked against what the grader knows ------------------------------------

OMITTED = Returned("call", result=Result("array", "float32", (4,), None), seconds=0.1, jit_used=True)
OVER_ITS_BOUND = answered(np.zeros(2000, np.float32))  # 8000 bytes where a case of T=2 allows 16 * 4 + 4096


@pytest.mark.parametrize("forged, said", [(OMITTED, "said to be too large to send"),
                                          (OVER_ITS_BOUND, "8000 bytes, where its request allowed 4160")],
                         ids=["omitted though it fits", "bytes over its bound"])
def test_an_answer_that_lies_about_its_bound_ends_the_run_as_malformed(session, forged, said):
    """Learner code can write to the reply pipe: an array said to be omitted where the grader needs (and the
    worker sends) its bytes is a forgery, a clear error on the submission, never a crash of the grader."""
    learner = FakeWorker(on(CASES[0], forged))
    s = session(learner)
    s.prefetch(CASES)
    with pytest.raises(workers.StopGrading) as stop:
        s.evaluate("case", CASES[0])
    assert stop.value.outcome.status == Status.ERROR
    assert "broke the grader's protocol: it sent a malformed answer" in stop.value.outcome.message
    assert said in stop.value.outcome.message
    assert learner.killed  # what it sends after a forgery cannot be told from its answers


def test_a_forged_answer_kept_from_a_cancelled_batch_is_checked_against_its_own_call_s_bound(session):
    """Answers already on their way when a batch is cancelled are read under the largest bound of the batches;
    each is checked against its own call's when its case takes it."""
    learner = FakeWorker(on(CASES[1], OMITTED), in_flight=1)
    s = session(learner)
    s.prefetch(CASES)
    assert statuses(s, CASES[:1]) == [Status.PASS]
    s.cancel_pending()
    with pytest.raises(workers.StopGrading) as stop:
        s.evaluate("case", CASES[1])
    assert stop.value.outcome.status == Status.ERROR and "too large to send" in stop.value.outcome.message
    assert learner.killed


def test_an_array_too_large_to_send_fails_on_its_shape(session):
    """An answer larger than its bound is omitted by an honest worker too: it fails as a wrong shape."""
    huge = Returned("call", result=Result("array", "float32", (5000,), None), seconds=0.1, jit_used=True)
    s = session(FakeWorker(on(CASES[0], huge)))
    s.prefetch(CASES)
    outcome = s.evaluate("case", CASES[0])
    assert outcome.status == Status.FAIL and outcome.comparison.stage == "shape"
