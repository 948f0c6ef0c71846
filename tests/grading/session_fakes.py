"""Workers and a reference side faked in this process, for the tests of a grading session and of what it
drives (tests/grading/test_session.py, test_workers.py, test_param_checks.py).

A :class:`FakeWorker` stands for the learner's worker (:class:`grader.sandbox.pool.Worker`: the ``request``,
``receive``, ``kill`` and ``close`` that :class:`grader.grading.workers.LearnerWorkers` calls): it answers its requests
in the order they came, each call as the test says, and dies where the test says. It refuses to be waited
on where no reply is due or where another kind of reply is due, as a real worker would hang or break the
protocol there. :class:`FakeTrusted` stands for the reference's side; the clock is the test's. A test module
imports the fixtures it uses (``clock``, ``spares``, ``session``) with the fakes.
"""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import ROOT
from grader.core import kinds
from grader.core.verdict import Status
from grader.grading import workers
from grader.grading.session import Options, Session
from grader.problem import problems
from grader.sandbox.pool import READY_SECONDS, Output, WorkerFailure
from grader.sandbox.operations import Reply, Result, Returned, Tree

PROBLEM = problems.load(ROOT, "t5_relative_pos")  # four int arguments (each a signature of its own), float32 (T, T)
CALL_SECONDS, PROBLEM_SECONDS = 20.0, 60.0


def case(seed: int, T: int = 2) -> dict:
    return {"seed": seed, "T": T, "num_buckets": 8, "max_distance": 20}


def expected(args: dict) -> np.ndarray:
    """The reference's flat output: a different one for every case."""
    return np.arange(args["T"] ** 2, dtype=np.float32) + 100 * args["seed"] + args["T"]


def moved_output(args: dict) -> np.ndarray:
    """The reference's flat output where the case may move parameters: moving any changes it by 7."""
    return expected(args) + (7 if kinds.moved(args) else 0)


def answered(output: np.ndarray, together: bool = False) -> Returned:
    return Returned("call", result=Result("array", output.dtype.name, output.shape, output), seconds=0.1,
                 jit_used=True, together=together)


def right(args: dict) -> Reply:
    return answered(expected(args))


def wrong(args: dict) -> Reply:
    return answered(expected(args) + 1)


def raised(kind: str = "exception", during: str = "call") -> Returned:
    return Returned("call", ok=False, error={"kind": kind, "type": "ValueError", "message": "boom", "file": None, "line": None,
                                  "during": during, "traceback": ""})


def on(bad: dict, then, otherwise=right):
    """An answer function: ``then`` on ``bad`` (a reply, a failure, a :class:`Late` one, or a function of the
    args that gives one), else ``otherwise``."""
    def answer(args: dict):
        if args != bad:
            return otherwise(args)
        return then(args) if callable(then) else then
    return answer


CRASH = WorkerFailure("crash", "the process died on signal SIGSEGV")
LOADED = Reply("load")
CANCELLED = Reply("cancel")
VALUES = {"params/w": np.ones((2, 3), np.float32)}


class FakeWorker:
    """Answers each request in order: a load with ``load``, each call of a batch with ``answer(args)``, a single
    call with ``single(args)`` (default ``answer``). An answer that is a WorkerFailure is where the worker
    dies: waiting for it raises it, and nothing comes after. A cancel keeps ``in_flight`` batch answers (those
    already on their way) and drops the rest of the batch."""

    def __init__(self, answer=right, *, single=None, load=LOADED, in_flight: int = 0,
                 values=Tree("params", values=VALUES)):
        self.answer, self.single, self.load, self.in_flight = answer, single or answer, load, in_flight
        self.values = values  # the reply to a request for the parameters' initial values
        self.requests: list[dict] = []
        self.waits: list[tuple[str, float, int, float]] = []  # (expect, timeout, max_bytes, ready_seconds)
        self.due: deque = deque()  # (kind, reply or failure), in the order the replies come
        self.ended = self.killed = self.closed = False
        self.output = Output()

    def ops(self) -> list[str]:
        return [r["op"] for r in self.requests]

    def calls(self) -> list[dict]:
        """The arguments of each single call asked, in order."""
        return [args_of(r["args"]) for r in self.requests if r["op"] == "call"]

    def batches(self) -> list[list[dict]]:
        return [[args_of(c["args"]) for c in r["calls"]] for r in self.requests if r["op"] == "batch"]

    def request(self, header: dict, arrays: list = ()) -> None:
        self.requests.append(header)
        op = header["op"]
        if op == "load":
            self.due.append(("load", self.load))
        elif op == "batch":
            self.due.extend(("batch", self.answer(args_of(c["args"], c.get("moved", False)))) for c in header["calls"])
        elif op == "call":
            self.due.append(("call", self.single(args_of(header["args"], header.get("moved", False)))))
        elif op == "params":
            self.due.append(("params", self.values))
        elif op == "mark":
            self.due.append(("mark", Reply("mark")))
        elif op == "cancel":
            batch = [d for d in self.due if d[0] == "batch"][:self.in_flight]
            self.due = deque([d for d in self.due if d[0] != "batch"] + batch + [("cancel", CANCELLED)])
        else:
            raise AssertionError(f"an unexpected request {op!r}")

    def receive(self, timeout: float, max_bytes: int, expect: str | tuple[str, ...],
                ready_seconds: float = READY_SECONDS) -> Reply:
        self.waits.append((expect, timeout, max_bytes, ready_seconds))
        if self.ended:
            raise WorkerFailure("crash", "the worker has ended")
        assert self.due, f"the session waits for a {expect!r} reply where none is due"
        kind, reply = self.due.popleft()
        if isinstance(reply, Late):
            reply = reply.happen()
        if isinstance(reply, WorkerFailure):
            self.ended = True
            raise reply
        assert kind in ((expect,) if isinstance(expect, str) else expect), f"the session waits for a {expect!r} reply where a {kind!r} reply is due"
        return reply

    def kill(self) -> None:
        self.killed = self.ended = True

    def poll(self) -> int | None:
        return -9 if self.ended else None

    def close(self) -> None:
        self.closed = self.ended = True


def args_of(entries: list[dict], moved=False) -> dict:
    """A call's arguments, with the parameters it moves (as a case says them) where it moves any."""
    return kinds.with_moved({e["name"]: e["value"] for e in entries}, moved)


class FakeTrusted:
    """The reference's side: its outputs are :func:`expected`'s; those in ``kept`` are cached. As the real
    one, it keeps what a batch answered before the case collected, and a case not in a batch is the answer
    to the last single request."""

    recorded = False

    def __init__(self, kept: list[dict] = ()):
        self.kept = {self.digest(a): expected(a) for a in kept}
        self.deadline: float | None = None
        self.pending: list[dict] = []
        self.batches: list[list[dict]] = []
        self.asked: list[dict] = []
        self.reference_values = {"params/w": np.zeros((2, 3), np.float32)}
        self.substitutions: list[tuple[dict, dict]] = []  # (args, values) of each run on a learner's values
        self.substitute_gives = expected  # the output of such a run (the learner's right answer, by default)

    def digest(self, args: dict) -> str:
        return kinds.args_digest(PROBLEM.args, args)

    def cached(self, key: str, args: dict, jit: bool = True):
        return self.kept.get(self.digest(args))

    def request_batch(self, key: str, cases: list[dict]) -> None:
        self.batches.append(list(cases))
        self.pending = list(cases)

    def is_pending(self, key: str, args: dict) -> bool:
        return args in self.pending

    def request(self, key: str, args: dict, jit: bool = True) -> None:
        self.asked.append(args)

    def collect(self, key: str, args: dict, timeout: float = 300) -> np.ndarray:
        if args in self.pending:
            while self.pending:
                done = self.pending.pop(0)
                self.kept[self.digest(done)] = expected(done)
                if done == args:
                    break
        else:
            assert self.asked and self.asked[-1] == args, f"the reference was never asked for {args}"
        return expected(args)

    def limit(self, deadline: float | None) -> None:
        self.deadline = deadline

    def param_values(self, args: dict) -> dict:
        return self.reference_values

    def substituted(self, args: dict, values: dict) -> np.ndarray | None:
        self.substitutions.append((args, values))
        return self.substitute_gives(args)

    def outputs(self, key: str, cases: list[dict]) -> list[np.ndarray]:
        return [moved_output(args) for args in cases]

    def agrees(self, args: dict, expected: np.ndarray, got: np.ndarray) -> bool:
        return expected.shape == got.shape and bool(np.allclose(expected, got))

    def accept_also(self, args: dict, expected: np.ndarray):
        return None

    def acknowledge(self) -> None:
        pass


class FakeLaunch:
    spec = "the learner's spec"

    def __init__(self, learner: FakeWorker, zygote=None):
        self.learner, self.zygote = learner, zygote

    def isolation(self) -> str:
        return "namespaces"

    def close(self) -> None:
        pass


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def at(self, seconds: float, then) -> Late:
        """``then``, a reply or a failure, once the clock reads ``seconds`` past its start (the session's)."""
        return Late(self, 1000.0 + seconds, then)


class Late:
    """A reply or a failure that comes when the clock reads ``when``: the clock moves as it is awaited."""

    def __init__(self, clock: Clock, when: float, then):
        self.clock, self.when, self.then = clock, when, then

    def happen(self):
        self.clock.now = self.when
        return self.then


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(workers, "time", SimpleNamespace(monotonic=clock))
    return clock


@pytest.fixture
def spares(monkeypatch) -> list[FakeWorker]:
    """The workers the session may start (a fresh one after a death, a second one), in that order."""
    spares: list[FakeWorker] = []

    def start(spec, zygote):
        assert spec == FakeLaunch.spec
        assert spares, "the session started a worker where it should not have"
        return spares.pop(0)

    monkeypatch.setattr(workers, "Worker", start)
    return spares


@pytest.fixture
def session(tmp_path, clock, spares):
    """``session(learner, kept=(), zygote=None)``: a session, its learner's file sent to ``learner`` to load."""
    path = tmp_path / "t5_relative_pos.py"
    path.write_text("def t5_relative_pos(seed, T, num_buckets, max_distance):\n    ...\n")

    def make(learner: FakeWorker, kept: list[dict] = (), zygote=None) -> Session:
        options = Options(call_seconds=CALL_SECONDS, problem_seconds=PROBLEM_SECONDS)
        made = Session(PROBLEM, path, options, trusted=FakeTrusted(kept), launch=FakeLaunch(learner, zygote))
        made.load()
        return made

    return make


def statuses(s: Session, cases: list[dict]) -> list[Status]:
    return [s.evaluate("case", args).status for args in cases]


CASES = [case(0), case(1), case(2), case(3)]
