"""A worker process running trusted modules, faked in this process, for the tests of the trusted side
(tests/grading/test_trusted_worker.py, test_trusted.py).

:class:`FakeProcess` stands for :class:`grader.sandbox.pool.Worker` as
:class:`grader.grading.trusted_worker.TrustedWorker` uses it: it answers its requests in the order they came (a module's output on a call is ``outputs[key](args)``,
or an error where that raises), refuses to be waited on where no reply is due or where another kind is due,
and fails where the test says."""

from __future__ import annotations

from collections import deque

import numpy as np

from conftest import ROOT
from grader.problem import problems
from grader.sandbox.operations import Reply, Result, Returned
from grader.sandbox.pool import WorkerFailure

PROBLEM = problems.load(ROOT, "t5_relative_pos")  # four int arguments, float32 (T, T); none of CASES in the statement


def case(seed: int, T: int = 2) -> dict:
    return {"seed": seed, "T": T, "num_buckets": 8, "max_distance": 20}


CASES = [case(0), case(1), case(2), case(3)]


def reference(args: dict) -> np.ndarray:
    """The reference's output in these tests: a different one for every case, of the shape problem.toml says."""
    return (np.arange(args["T"] ** 2, dtype=np.float32) + 100 * args["seed"]).reshape(args["T"], args["T"])


def returned(output: np.ndarray) -> Returned:
    return Returned("call", result=Result("array", output.dtype.name, output.shape, output), seconds=0.1, jit_used=True)


def error(message: str = "boom") -> Reply:
    return Reply("call", ok=False, error={"kind": "exception", "type": "ValueError", "message": message, "file": None,
                                         "line": 3, "during": "call", "traceback": ""})


class FakeProcess:
    """``outputs``: key -> function of a call's arguments (raising: an error reply). ``load_fails``: keys
    whose load fails. ``fail``: a :class:`WorkerFailure` every wait raises once the process has ``ended``.
    ``in_flight``: how many answers of a batch are on their way when it is cancelled."""

    def __init__(self, outputs: dict, load_fails=(), in_flight: int = 0):
        self.outputs, self.load_fails, self.in_flight = outputs, set(load_fails), in_flight
        self.requests: list[dict] = []
        self.due: deque = deque()
        self.failure: WorkerFailure | None = None
        self.ended = self.closed = False
        self.timeouts: list[float] = []

    def ops(self) -> list[str]:
        return [r["op"] for r in self.requests]

    def answer(self, op: str, key: str, entries: list[dict]):
        args = {e["name"]: e["value"] for e in entries}
        try:
            return returned(np.asarray(self.outputs[key](args)))
        except Exception as exc:  # noqa: BLE001  (the module raised: an error reply)
            return Reply(op, ok=False, error=error(str(exc)).error)

    def request(self, header: dict, arrays: list = ()) -> None:
        self.requests.append(header)
        op = header["op"]
        if op == "load":
            self.due.append(("load", Reply("load", ok=False, error=error("no such name").error)
                             if header["key"] in self.load_fails else Reply("load")))
        elif op == "call":
            self.due.append(("call", self.answer("call", header["key"], header["args"])))
        elif op == "batch":
            self.due.extend(("batch", self.answer("batch", header["key"], c["args"])) for c in header["calls"])
        elif op == "cancel":
            batch = [d for d in self.due if d[0] == "batch"][:self.in_flight]
            self.due = deque([d for d in self.due if d[0] != "batch"] + batch + [("cancel", Reply("cancel"))])
        else:
            self.due.append((op, Reply(op)))

    def receive(self, timeout: float, max_bytes: int, expect):
        self.timeouts.append(timeout)
        if self.failure is not None:
            raise self.failure
        assert self.due, "waited on where no reply is due"
        kind, reply = self.due.popleft()
        assert kind in ((expect,) if isinstance(expect, str) else expect), f"a {kind!r} reply where {expect!r} is due"
        return reply

    def poll(self) -> int | None:
        return 1 if self.ended else None

    def close(self) -> None:
        self.closed = True
