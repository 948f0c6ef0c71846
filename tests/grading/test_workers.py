"""How the learner's workers are scheduled: batches cancelled, a second worker started, split and dropped,
the parameters' values due and the printed output's mark (:class:`grader.grading.workers.LearnerWorkers`),
with workers faked in this process (:mod:`session_fakes`); and the helpers beside them."""

from __future__ import annotations

import numpy as np
import pytest

from grader.core.verdict import Status
from grader.grading import workers
from grader.sandbox.pool import WorkerFailure
from session_fakes import CASES, CRASH, PROBLEM, VALUES, FakeWorker, answered, case, on, raised, statuses
from session_fakes import clock, session, spares  # noqa: F401  (fixtures: the session, the clock and spare workers)


# -- cancelling --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("in_flight", [0, 1, 3])
def test_cancelling_keeps_the_answers_on_their_way_and_drops_the_rest(session, in_flight):
    learner = FakeWorker(in_flight=in_flight)
    s = session(learner)
    s.prefetch(CASES)
    assert statuses(s, CASES[:1]) == [Status.PASS]
    s.cancel_pending()
    assert learner.ops() == ["load", "batch", "cancel"] and learner.waits[-1][0] == ("batch", "cancel")
    s.cancel_pending()  # nothing left to cancel
    assert learner.ops() == ["load", "batch", "cancel"]
    assert statuses(s, CASES[1:]) == [Status.PASS] * 3
    assert learner.calls() == CASES[1 + in_flight:]  # those dropped, asked again one by one


def test_a_second_worker_not_yet_loaded_loads_on_cancel_and_serves_the_next_batch(session, spares):
    learner, second = FakeWorker(), FakeWorker()
    spares.append(second)
    s = session(learner, kept=CASES, zygote=object())
    s.prefetch(CASES)
    s.cancel_pending()
    assert not second.killed and second.waits[0][0] == "load" and second.ops()[-1] == "cancel"
    assert learner.ops()[-1] == "cancel"
    got = s.answers(CASES)  # the batch that tells mistakes apart: both workers again, no third started
    assert all(g is not None for g in got) and second.ops().count("load") == 1 and second.batches()[-1]


def test_a_second_worker_that_cannot_load_is_dropped_on_cancel(session, spares):
    learner, second = FakeWorker(), FakeWorker(load=raised())
    spares.append(second)
    s = session(learner, kept=CASES, zygote=object())
    s.prefetch(CASES)
    s.cancel_pending()
    assert second.killed and "cancel" not in second.ops()
    assert learner.ops()[-1] == "cancel"


def test_the_second_worker_goes_on_with_its_batch_while_the_first_is_needed_and_answers_take_from_it(session,
                                                                                                      spares):
    learner, second = FakeWorker(), FakeWorker()
    spares.append(second)
    s = session(learner, kept=CASES, zygote=object())
    s.prefetch(CASES)  # CASES[0] and [2] to the first, [1] and [3] to the second
    s.evaluate("case", CASES[0])
    s.workers.cancel(only=s.workers.first)  # as grade does once a case fails: the first worker is asked next
    assert learner.ops()[-1] == "cancel" and "cancel" not in second.ops()
    got = s.answers(CASES)
    assert all(g is not None for g in got)
    assert second.batches() == [[CASES[1], CASES[3]]]  # its answers came from the batch it had: none asked again
    assert learner.batches()[-1] == [CASES[2]] and second.ops().count("load") == 1


def test_a_worker_still_answering_a_batch_is_killed_at_the_end_not_asked_to_quit(session, spares):
    learner, second = FakeWorker(), FakeWorker()
    spares.append(second)
    s = session(learner, kept=CASES, zygote=object())
    s.prefetch(CASES)
    s.evaluate("case", CASES[0])
    s.workers.cancel(only=s.workers.first)
    s.close()
    assert second.killed and not learner.killed and learner.closed


# -- a second worker -------------------------------------------------------------------------------------


def test_with_the_reference_kept_a_second_worker_takes_every_other_signature(session, spares):
    learner, second = FakeWorker(), FakeWorker()
    spares.append(second)
    s = session(learner, kept=CASES, zygote=object())
    s.prefetch(CASES)
    assert learner.batches() == [[CASES[0], CASES[2]]]
    assert second.ops() == ["load", "batch"] and second.batches() == [[CASES[1], CASES[3]]]
    assert statuses(s, CASES) == [Status.PASS] * 4
    assert second.waits[0][0] == "load" and not s.trusted.batches
    assert learner.calls() == [] and s.workers.second is second


def test_without_a_zygote_or_with_the_reference_to_compute_one_worker_takes_all(session, spares):
    spares.append(FakeWorker())
    s = session(FakeWorker(), kept=CASES)  # no zygote
    s.prefetch(CASES)
    assert s.workers.first.batches() == [CASES]
    s = session(FakeWorker(), kept=CASES[1:], zygote=object())  # the reference computes one
    s.prefetch(CASES)
    assert s.workers.first.batches() == [CASES] and len(spares) == 1


@pytest.mark.parametrize("second", [lambda: FakeWorker(load=raised()), lambda: FakeWorker(on(CASES[1], CRASH))],
                         ids=["cannot load", "dies"])
def test_what_a_second_worker_leaves_unanswered_the_first_answers_case_by_case(session, spares, second):
    learner, second = FakeWorker(), second()
    spares.append(second)
    s = session(learner, kept=CASES, zygote=object())
    s.prefetch(CASES)
    assert statuses(s, CASES) == [Status.PASS] * 4
    assert second.killed
    assert CASES[1] in learner.calls() and CASES[3] in learner.calls()


# -- the parameters' initial values, and the printed output's mark ----------------------------------------


def test_values_asked_are_taken_before_the_worker_is_asked_anything_else(session):
    learner = FakeWorker()
    s = session(learner)
    s.ask_param_values(CASES[0])
    s.evaluate("case", CASES[0])  # a call outside any batch: the values' reply is taken first
    assert learner.ops() == ["load", "params", "call"] and [w[0] for w in learner.waits] == ["load", "params", "call"]
    graded, reference = s.param_values()
    assert graded is VALUES and reference is s.trusted.reference_values
    assert learner.waits[1][2] == 2 * 24 + 4096  # twice the reference's bytes


def test_values_that_do_not_come_kill_the_worker_so_that_no_late_reply_is_taken_for_another(session):
    learner = FakeWorker(values=WorkerFailure("timeout", "no answer within 20 s"))
    s = session(learner)
    s.ask_param_values(CASES[0])
    assert s.param_values() is None and learner.killed


def test_the_mark_leaves_out_what_the_code_printed_after_it(session):
    learner = FakeWorker()
    s = session(learner)
    s.workers.ready()
    learner.output.add(b"the case's own line\n")
    s.workers.mark_output()
    mark = learner.requests[-1]["text"]
    learner.output.add(mark.encode() + b"a probe's line\n")
    printed = s.close()
    assert printed.startswith("the case's own line\n") and "a probe's line" not in printed
    assert printed.endswith(workers.REPLAY_LEFT_OUT)


# -- the helpers beside the workers ------------------------------------------------------------------------

def test_a_split_batch_shares_no_traced_signature_between_its_parts():
    # Every argument of this problem is an integer, traced as a constant: each input is a signature of its own.
    cases = [("0", case(0)), ("1", case(1)), ("2", case(0)), ("3", case(2))]
    first, second = workers.split_by_signature(PROBLEM, cases)
    assert [d for d, _ in first] == ["0", "2", "3"] and [d for d, _ in second] == ["1"]
    assert workers.split_by_signature(PROBLEM, cases[:1]) == [cases[:1]]


@pytest.mark.parametrize("err, said", [
    ({"kind": "not_implemented", "file": None, "line": None}, "your function still raises NotImplementedError: fill "
                                                              "in the TODO in your file"),
    ({"kind": "exit", "message": "1", "file": None, "line": 4}, "your code called sys.exit (1) at your file, line 4"),
    ({"kind": "exception", "type": "KeyError", "message": "'x'", "during": "import", "file": None, "line": None},
     "KeyError while importing your file: 'x' (your file)"),
])
def test_a_learner_s_error_says_what_was_raised_and_where(err, said):
    assert workers.error_message(err).startswith(said)


def test_only_an_answer_with_an_array_has_a_flat_output():
    assert workers.flat_array(answered(np.ones((2, 2), np.float32))).shape == (4,)
    assert workers.flat_array(raised()) is None and workers.flat_array(None) is None
    assert workers.flat_array(WorkerFailure("crash", "died")) is None
