"""The requests every worker of a run gets (:mod:`grader.grading.requests`): the bound on a reply's bytes, and
cancelling a batch while keeping the answers already on their way."""

from __future__ import annotations

import numpy as np

from grader.grading.requests import batch_request, cancel_batch, reply_bound
from grader.sandbox.operations import Reply
from grader.sandbox.pool import WorkerFailure
from trusted_fakes import CASES, PROBLEM, case, returned


def test_a_reply_may_carry_any_dtype_at_the_largest_expected_size():
    assert reply_bound(PROBLEM, [case(0, T=2), case(1, T=5)]) == 16 * 25 + 4096
    assert reply_bound(PROBLEM, []) == 4096
    header, _ = batch_request(PROBLEM, "learner", CASES[:2], jit=True)
    assert [c["max_bytes"] for c in header["calls"]] == [reply_bound(PROBLEM, [a]) for a in CASES[:2]]


class Cancelled:
    def __init__(self, *replies):
        self.replies, self.requests = list(replies), []

    def request(self, header, arrays=()):
        self.requests.append(header)

    def receive(self, timeout, max_bytes, expect):
        assert expect == ("batch", "cancel")
        reply = self.replies.pop(0)
        if isinstance(reply, WorkerFailure):
            raise reply
        return reply


def test_cancelling_keeps_the_answers_on_their_way_until_the_batch_has_stopped():
    answers = [returned(np.zeros(4, np.float32)), returned(np.ones(4, np.float32))]
    worker, kept = Cancelled(*answers, Reply("cancel")), []
    cancel_batch(worker, kept.append, 1.0, 4096)
    assert worker.requests == [{"op": "cancel"}] and kept == answers and not worker.replies


def test_a_worker_that_fails_while_cancelling_ends_the_cancel():
    worker, kept = Cancelled(returned(np.zeros(4, np.float32)), WorkerFailure("crash", "it died")), []
    cancel_batch(worker, kept.append, 1.0, 4096)
    assert len(kept) == 1
