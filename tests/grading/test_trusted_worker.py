"""One worker running trusted modules (:class:`grader.grading.trusted_worker.TrustedWorker`), its process faked
in this process (:mod:`trusted_fakes`): loads before requests, a batch's answers in order, cancelling, and a
failure of the process told apart from a failure of a module."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from grader.grading import trusted_worker
from grader.grading.errors import ReferenceError, TrustedFailure, TrustedTimeout
from grader.grading.sources import TrustedSources
from grader.sandbox.pool import WorkerFailure
from trusted_fakes import CASES, PROBLEM, FakeProcess, reference


@pytest.fixture
def started(monkeypatch):
    """``started(process, *variants)``: a TrustedWorker whose next process is ``process``, with the variant keys
    registered (each at the reference's path), and the answers it kept as (key, args, jit)."""

    def make(process: FakeProcess, *variants: str):
        processes = [process]
        monkeypatch.setattr(trusted_worker, "Worker", lambda spec, zygote: processes.pop(0))
        sources = TrustedSources(PROBLEM, PROBLEM.hooks())
        for key in variants:
            sources.add(key, PROBLEM.reference)
        kept: list[tuple[str, dict, bool]] = []

        def keep(key, args, jit, reply):
            if not reply.ok:
                raise ReferenceError(reply.error["message"])
            kept.append((key, args, jit))
            return reply.result.array.reshape(-1)

        return trusted_worker.TrustedWorker(PROBLEM, sources, None, None, keep), kept, processes

    return make


def test_every_module_is_loaded_before_the_first_request_the_reference_first(started):
    process = FakeProcess({"reference": reference, "v": reference})
    worker, _, _ = started(process, "v")
    worker.request("reference", CASES[0])
    assert process.ops() == ["load", "load", "call"]
    assert [r["key"] for r in process.requests[:2]] == ["reference", "v"]
    assert np.array_equal(worker.collect("reference", CASES[0]), reference(CASES[0]).reshape(-1))
    assert not worker.unacknowledged


def test_a_module_that_does_not_load_is_a_broken_problem_naming_its_file(started):
    worker, _, _ = started(FakeProcess({"reference": reference}, load_fails={"v"}), "v")
    worker.request("reference", CASES[0])
    with pytest.raises(ReferenceError, match=r"t5_relative_pos\.py failed to load: ValueError: no such name, line 3"):
        worker.collect("reference", CASES[0])


def test_a_batch_s_answers_are_kept_in_order_up_to_the_one_asked(started):
    worker, kept, _ = started(FakeProcess({"reference": reference}))
    worker.request_batch("reference", CASES)
    assert worker.is_pending("reference", CASES[2]) and not worker.is_pending("v", CASES[2])
    worker.collect("reference", CASES[2])
    assert [args for _, args, _ in kept] == CASES[:3] and worker.is_pending("reference", CASES[3])


@pytest.mark.parametrize("in_flight", [0, 2])
def test_anything_new_cancels_the_rest_of_a_batch_keeping_the_answers_on_their_way(started, in_flight):
    process = FakeProcess({"reference": reference}, in_flight=in_flight)
    worker, kept, _ = started(process)
    worker.request_batch("reference", CASES)
    worker.request("reference", CASES[0], jit=False)
    assert process.ops()[-2:] == ["cancel", "call"] and not worker.pending
    assert [args for _, args, _ in kept] == CASES[:in_flight]
    worker.collect("reference", CASES[0])
    assert kept[-1] == ("reference", CASES[0], False)  # the single request's mode


def test_a_process_that_died_is_replaced_and_loads_everything_again(started):
    first, fresh = FakeProcess({"reference": reference}), FakeProcess({"reference": reference})
    worker, _, processes = started(first, "v")
    processes.append(fresh)
    worker.request("reference", CASES[0])
    worker.collect("reference", CASES[0])
    first.ended = True
    worker.request("reference", CASES[1])
    assert first.closed and worker.process is fresh and fresh.ops() == ["load", "load", "call"]


@pytest.mark.parametrize("failure, raised", [(WorkerFailure("crash", "it died"), TrustedFailure),
                                             (WorkerFailure("timeout", "no answer"), TrustedTimeout)])
def test_a_failure_of_the_process_is_the_worker_s_not_a_module_s_and_drops_the_batch(started, failure, raised):
    process = FakeProcess({"reference": reference})
    worker, _, _ = started(process)
    worker.request_batch("reference", CASES)
    process.failure = failure
    with pytest.raises(raised):
        worker.collect("reference", CASES[1])
    assert not worker.pending


def test_no_wait_goes_past_the_deadline(started, monkeypatch):
    process = FakeProcess({"reference": reference})
    worker, _, _ = started(process)
    monkeypatch.setattr(trusted_worker, "time", SimpleNamespace(monotonic=lambda: 1000.0))
    worker.deadline = 1007.0
    worker.request("reference", CASES[0])
    worker.collect("reference", CASES[0], timeout=300)
    assert process.timeouts == [7.0, 7.0]  # the load's and the call's
    worker.deadline = None
    assert worker.left(300) == 300


def test_closing_ends_the_process_after_cancelling_its_batch(started):
    process = FakeProcess({"reference": reference})
    worker, _, _ = started(process)
    worker.request_batch("reference", CASES)
    worker.close()
    assert process.ops()[-1] == "cancel" and process.closed and worker.process is None and not worker.modules
