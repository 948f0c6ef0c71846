"""The requests every worker of a run gets, trusted or not, with the bound on what each reply may carry."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grader.problem.problems import Problem
from grader.sandbox import operations
from grader.sandbox.pool import Worker, WorkerFailure


def reply_bound(problem: Problem, cases: list[dict]) -> int:
    """The most array bytes a reply to these calls may carry: any dtype at the expected size."""
    return max((16 * int(np.prod(problem.natural_shape(args))) for args in cases), default=0) + 4096


def load_request(problem: Problem, key: str, path: Path, source: bytes, memory_mib: int = 0) -> operations.Request:
    return operations.load(key, str(path), problem.slug, list(problem.args), source, memory_mib,
                           problem.moves_parameters)


def call_request(problem: Problem, key: str, args: dict, jit: bool) -> operations.Request:
    return operations.call(key, problem.args, args, jit, reply_bound(problem, [args]))


def batch_request(problem: Problem, key: str, cases: list[dict], jit: bool) -> operations.Request:
    return operations.batch(key, problem.args, [(args, reply_bound(problem, [args])) for args in cases], jit)


def cancel_batch(worker: Worker, keep, timeout: float, max_bytes: int) -> None:
    """Ask ``worker`` to stop its batch; replies already on their way go to ``keep(reply)``."""
    worker.request(*operations.cancel())
    while True:
        try:
            reply = worker.receive(timeout, max_bytes, ("batch", "cancel"))
        except WorkerFailure:
            return
        if reply.op == "cancel":
            return
        keep(reply)
