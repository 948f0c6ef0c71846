"""How a grading session schedules its work, with workers and a reference side faked in this process.

A :class:`FakeWorker` stands for the learner's worker (:class:`grader.sandbox.pool.Worker`: the ``request``,
``receive``, ``kill`` and ``close`` that :class:`grader.grading.workers.LearnerWorkers` calls): it answers its requests
in the order they came, each call as the test says, and dies where the test says. It refuses to be waited
on where no reply is due or where another kind of reply is due, as a real worker would hang or break the
protocol there. :class:`FakeTrusted` stands for the reference's side; the clock is the test's.
"""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import ROOT
from grader.core import kinds
from grader.core.verdict import Status
from grader.grading import engine, workers
from grader.problem import problems
from grader.sandbox.pool import READY_SECONDS, Output, WorkerFailure
from grader.sandbox.protocol import Reply, Result

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


def answered(output: np.ndarray, together: bool = False) -> Reply:
    return Reply(ok=True, result=Result("array", output.dtype.name, output.shape, output), seconds=0.1,
                 jit_used=True, together=together)


def right(args: dict) -> Reply:
    return answered(expected(args))


def wrong(args: dict) -> Reply:
    return answered(expected(args) + 1)


def raised(kind: str = "exception", during: str = "call") -> Reply:
    return Reply(ok=False, error={"kind": kind, "type": "ValueError", "message": "boom", "file": None, "line": None,
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
LOADED = Reply(ok=True)
CANCELLED = Reply(ok=True, op="cancelled")
ACCEPTS = {"loaded": {"load"}, "result": {"batch", "call"}, "cancel": {"batch", "call", "cancelled"},
           "params": {"params"}, "mark": {"mark"}}
VALUES = {"params/w": np.ones((2, 3), np.float32)}


class FakeWorker:
    """Answers each request in order: a load with ``load``, each call of a batch with ``answer(args)``, a single
    call with ``single(args)`` (default ``answer``). An answer that is a WorkerFailure is where the worker
    dies: waiting for it raises it, and nothing comes after. A cancel keeps ``in_flight`` batch answers (those
    already on their way) and drops the rest of the batch."""

    def __init__(self, answer=right, *, single=None, load=LOADED, in_flight: int = 0,
                 values=Reply(ok=True, values=VALUES)):
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
            self.due.append(("mark", Reply(ok=True)))
        elif op == "cancel":
            batch = [d for d in self.due if d[0] == "batch"][:self.in_flight]
            self.due = deque([d for d in self.due if d[0] != "batch"] + batch + [("cancelled", CANCELLED)])
        else:
            raise AssertionError(f"an unexpected request {op!r}")

    def receive(self, timeout: float, max_bytes: int = 0, expect: str = "result",
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
        assert kind in ACCEPTS[expect], f"the session waits for a {expect!r} reply where a {kind!r} reply is due"
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
        self.worker = None  # the graded module runs in a worker of its own
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

    def make(learner: FakeWorker, kept: list[dict] = (), zygote=None) -> engine.Session:
        options = engine.Options(call_seconds=CALL_SECONDS, problem_seconds=PROBLEM_SECONDS)
        made = engine.Session(PROBLEM, path, options, trusted=FakeTrusted(kept), launch=FakeLaunch(learner, zygote))
        made.load()
        return made

    return make


def statuses(s: engine.Session, cases: list[dict]) -> list[Status]:
    return [s.evaluate("case", args).status for args in cases]


CASES = [case(0), case(1), case(2), case(3)]


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
    assert fresh.waits[0][0] == "loaded"  # loaded before it is asked anything


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


# -- cancelling --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("in_flight", [0, 1, 3])
def test_cancelling_keeps_the_answers_on_their_way_and_drops_the_rest(session, in_flight):
    learner = FakeWorker(in_flight=in_flight)
    s = session(learner)
    s.prefetch(CASES)
    assert statuses(s, CASES[:1]) == [Status.PASS]
    s.cancel_pending()
    assert learner.ops() == ["load", "batch", "cancel"] and learner.waits[-1][0] == "cancel"
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
    assert not second.killed and second.waits[0][0] == "loaded" and second.ops()[-1] == "cancel"
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
    assert second.waits[0][0] == "loaded" and not s.trusted.batches
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


# -- the time limits ---------------------------------------------------------------------------------------


def test_each_wait_is_cut_to_the_time_left(session, clock):
    learner = FakeWorker()
    s = session(learner)
    s.prefetch(CASES)
    assert learner.waits[-1][:2] == ("loaded", CALL_SECONDS) and learner.waits[-1][3] == PROBLEM_SECONDS
    clock.now += PROBLEM_SECONDS - 5
    s.evaluate("case", CASES[0])
    assert learner.waits[-1][:2] == ("result", 5) and learner.waits[-1][3] == 5


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


# -- the parameters' initial values, and the printed output's mark ----------------------------------------


def test_values_asked_are_taken_before_the_worker_is_asked_anything_else(session):
    learner = FakeWorker()
    s = session(learner)
    s.ask_param_values(CASES[0])
    s.evaluate("case", CASES[0])  # a call outside any batch: the values' reply is taken first
    assert learner.ops() == ["load", "params", "call"] and [w[0] for w in learner.waits] == ["loaded", "params",
                                                                                             "result"]
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
    s = session(FakeWorker(values=Reply(ok=True, values=same)))
    s.ask_param_values(CASES[0])
    s.evaluate("case", CASES[0])
    graded, _ = s.param_values()
    assert graded is same and s.trusted.substitutions == []


# -- what a worker's reply says is checked against what the grader knows ------------------------------------

OMITTED = Reply(ok=True, result=Result("array", "float32", (4,), None), seconds=0.1, jit_used=True)
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
    huge = Reply(ok=True, result=Result("array", "float32", (5000,), None), seconds=0.1, jit_used=True)
    s = session(FakeWorker(on(CASES[0], huge)))
    s.prefetch(CASES)
    outcome = s.evaluate("case", CASES[0])
    assert outcome.status == Status.FAIL and outcome.comparison.stage == "shape"


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
    s.tree_report = (TREE, reported)
    assert s.tree_contradiction(CASES[0]).startswith(said)


@pytest.mark.parametrize("reported, answer", [
    ({}, ignores), (None, ignores),
    ({"params/w": [3, 2]}, lambda args: answered(moved_output(args) + 3 * (kinds.moved(args) is not False))),
], ids=["a parameter missing", "no parameters at all", "a parameter misshaped"])
def test_a_tree_report_the_moved_outputs_bear_out_stands(session, reported, answer):
    """An honest report of a missing or misshaped parameter is never taken for a forgery: its moves do not
    change the output, or change it otherwise than the reference's."""
    s = session(FakeWorker(answer))
    s.tree_report = (TREE, reported)
    assert s.tree_contradiction(CASES[0]) is None


def test_a_tree_report_of_extra_parameters_alone_runs_nothing(session):
    """No output can show a parameter nothing uses, so a report of one is not checked, and costs no call."""
    learner = FakeWorker()
    s = session(learner)
    s.workers.ready()
    s.tree_report = (TREE, {**TREE, "params/extra": [3]})
    assert s.tree_contradiction(CASES[0]) is None
    assert learner.ops() == ["load"]


class Reported:
    """A session as :func:`grader.grading.engine.check_parameters` sees it: a tree report and what the outputs
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


DIFFERENT = engine.tree_differences(TREE, {})


@pytest.mark.parametrize("found, unseen", [([], False), (DIFFERENT, False), (None, True), (None, False)],
                         ids=["the same tree", "another tree", "no tree", "no report"])
@pytest.mark.parametrize("status", [Status.FAIL, Status.ERROR])
def test_no_tree_report_turns_a_failing_run_into_a_pass(found, unseen, status):
    """The tree can only tell against the code: a failing run stays as its outputs made it."""
    v = verdict(status)
    engine.check_parameters(Reported(found, unseen=unseen), v, CASES[0])
    assert (v.status, v.message) == (status, "as the outputs say")


def test_a_tree_that_agrees_is_said_only_where_every_output_agrees():
    """Where outputs fail, the worker's word that its tree is the statement's is not repeated as the grader's:
    no output backs it (a parameter left out and one ignored fail alike)."""
    passing, failing = verdict(Status.PASS), verdict(Status.FAIL)
    engine.check_parameters(Reported([]), passing, CASES[0])
    engine.check_parameters(Reported([]), failing, CASES[0])
    assert [(c.name, c.status) for c in passing.checks] == [("parameters", Status.PASS)]
    assert failing.checks == []


def test_a_tree_report_the_outputs_contradict_makes_a_passing_run_an_error():
    """A malformed report is a clear verdict on the submission, as any malformed reply is."""
    v = verdict(Status.PASS)
    engine.check_parameters(Reported([], contradiction="it reported no parameter `w`"), v, CASES[0])
    assert v.status == Status.ERROR
    assert v.message == engine.MALFORMED_TREE + ": it reported no parameter `w`"


def test_a_tree_report_the_outputs_contradict_on_a_failing_run_is_said_and_not_used():
    """The run's failure stands on its outputs; a false report is named for what it is, and neither its
    differences nor its "no parameters" reach the explanation."""
    v = verdict(Status.FAIL)
    session = Reported(DIFFERENT, contradiction="it reported no parameter `w`", unseen=True)
    engine.check_parameters(session, v, CASES[0])
    assert (v.status, v.params_diff, session.tree_unseen) == (Status.FAIL, [], False)
    [check] = v.checks
    assert check.status == Status.WARN and check.message.endswith("; the grader does not use it")


class Unverifiable(Reported):
    """A session whose outputs for checking its report cannot be had (a handout records none on them)."""

    def tree_contradiction(self, args: dict):
        from grader.grading.trusted import ReferenceError

        raise ReferenceError("this handout has no recorded answer for it")


def test_a_tree_difference_that_cannot_be_checked_against_outputs_still_fails_a_passing_run():
    """Checking a report against outputs may only take a claim away, never the verdict's ground: where it
    cannot run, the differences count as reported."""
    v = verdict(Status.PASS)
    engine.check_parameters(Unverifiable(DIFFERENT), v, CASES[0])
    assert v.status == Status.FAIL and v.params_diff == DIFFERENT
