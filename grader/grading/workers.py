"""The graded module's workers: which worker answers which input, and the answers on their way.

Scheduling only. :class:`LearnerWorkers` starts, loads, batches, cancels and restarts the learner's workers
(a second one on re-grades) and hands each answer over as it came; what an answer means (compared, counted,
kept for naming a mistake) is the case driver's, :class:`grader.grading.session.Session`. The run's time is a
:class:`Clock` that both sides, this one and the reference's, wait within. What the session asks of a graded
side that `grade check` runs in the trusted worker instead is :class:`grader.grading.shared.SharedWorker`'s;
:class:`GradedSide` is what both have in common.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from grader.core import kinds
from grader.core.verdict import SECOND_PROCESS, Outcome, Status
from grader.grading.requests import batch_request, call_request, cancel_batch, load_request, reply_bound
from grader.problem.problems import Problem
from grader.sandbox.pool import READY_SECONDS, Worker, WorkerFailure
from grader.sandbox import operations
from grader.sandbox.operations import Returned, check_bound
from grader.sandbox.protocol import ProtocolError
from grader.sandbox.zygote import Launch

REPLAY_LEFT_OUT = ("[what your code printed on the further inputs the grader ran to explain the failure is left "
                   "out: a replay shows its own case's]\n")
VALUES_BYTES = 64 << 20  # the most a learner's initial parameter values may take where the reference has none


class StopGrading(BaseException):
    """Ends the run at once. A BaseException, so that Hypothesis neither catches nor shrinks it."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


@dataclass
class Clock:
    """The run's time: no wait, on the learner's side or the reference's, goes past ``deadline``."""

    started: float
    deadline: float

    @classmethod
    def starting(cls, seconds: float) -> Clock:
        now = time.monotonic()
        return cls(now, now + seconds)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def out_of_time(self, args: dict | None = None) -> Outcome:
        return Outcome("time limit", args or {}, Status.TIMEOUT,
                       f"grading ran past the limit of {self.deadline - self.started:.0f} s for the whole problem")


@dataclass
class Fetch:
    """The learner's answers to one batch, on their way from ``worker``, in order: digests of those not
    yet received, and the bound on each one's array bytes (its call's own, which its reply is checked
    against). ``loading``: the worker's load reply comes first (a second worker's)."""

    worker: Worker
    pending: list[str] = field(default_factory=list)
    received: int = 0
    loading: bool = False
    bounds: dict[str, int] = field(default_factory=dict)


def split_by_signature(problem: Problem, cases: list[tuple[str, dict]]) -> list[list[tuple[str, dict]]]:
    """``cases`` (digest, args) in two parts with no traced signature in common (each signature is one
    more program to trace): signatures alternate between the parts in order of first appearance."""
    signatures: dict[tuple, int] = {}
    parts: tuple[list, list] = ([], [])
    for digest, args in cases:
        parts[signatures.setdefault(kinds.signature(problem.args, args), len(signatures)) % 2].append((digest, args))
    return [part for part in parts if part]


class GradedSide:
    """What the session asks of the graded module's side, and what both sides share: the graded module
    (``key``, at ``path``), the run's ``clock`` and the limits of one call, the ``first`` worker it runs in,
    and how a reply from there is received and a failure read as a case's outcome.

    The two sides differ in what the class says of itself: ``shared`` (the graded module runs in the trusted
    worker), ``source`` (the learner's code, None for a trusted module), the verdicts whose parameter tree
    is checked (``trees_checked_on``) and the trusted modules among the graded (``trusted_keys``, whose
    trees the trusted worker traces with the reference's)."""

    shared: bool
    source: bytes | None
    trees_checked_on: tuple[Status, ...]
    trusted_keys: tuple[str, ...]

    def __init__(self, problem: Problem, key: str, path: Path, trusted, clock: Clock, *, jit: bool,
                 call_seconds: float, memory_mib: int):
        self.problem, self.key, self.path, self.trusted, self.clock = problem, key, path, trusted, clock
        self.jit, self.call_seconds, self.memory_mib = jit, call_seconds, memory_mib
        self.first: Worker | None = None

    def receive(self, max_bytes: int, expect: str, worker: Worker | None = None):
        """The graded module's next reply, within the limit for one call and the time left (a worker's
        start, JAX's import, has an allowance of its own, within the time left). ``max_bytes`` is the bound
        the request set for that reply: a result that lies about it (an array said to be too large to send
        that fits) is a malformed answer, as the worker's pipe reader says of any other."""
        remaining = self.clock.remaining()
        if remaining <= 0:
            raise StopGrading(self.clock.out_of_time())
        worker = worker or self.first
        reply = worker.receive(min(self.call_seconds, remaining), max_bytes, expect,
                               ready_seconds=min(READY_SECONDS, max(remaining, 0.0)))
        try:
            return check_bound(reply, max_bytes)
        except ProtocolError as exc:
            raise self.malformed(str(exc), worker) from None

    def malformed(self, why: str, worker: Worker | None = None) -> WorkerFailure:
        """The failure of a worker whose answer was malformed (``why``)."""
        return WorkerFailure("protocol", f"it sent a malformed answer ({why})")

    def failure_outcome(self, name: str, args: dict, failure: WorkerFailure) -> Outcome:
        """How a worker's failure reads as the outcome of the case ``name`` on ``args``."""
        if failure.kind == "timeout":
            if self.clock.remaining() <= 0:
                return self.clock.out_of_time(args)
            return Outcome(name, args, Status.TIMEOUT, f"your function did not return within "
                                                        f"{self.call_seconds:g} s (the limit for one call); "
                                                        f"is there an endless loop?")
        if failure.kind == "memory":
            return Outcome(name, args, Status.ERROR, f"your code exceeded the memory limit of {self.memory_mib} MiB "
                                                     f"({failure.message})")
        if failure.kind == "protocol":
            return Outcome(name, args, Status.ERROR, f"the process running your code broke the grader's "
                                                     f"protocol: {failure.message}")
        if failure.kind == "isolation":
            return Outcome(name, args, Status.ERROR, failure.message)
        return Outcome(name, args, Status.ERROR, f"the process running your code stopped: {failure.message}")


class LearnerWorkers(GradedSide):
    """The worker that runs the learner's file, a second one where a batch is split, and their answers.

    State, all of it here: ``first`` (replaced by :meth:`restart` after a death partway through a batch),
    ``second``, ``fetches`` (batches on their way), ``memo`` (answers received ahead of need, by input digest),
    ``loaded``, ``due_bound`` (a reply to :meth:`ask_values` not yet taken) and ``output_mark``.
    """

    shared = False
    trees_checked_on = (Status.PASS, Status.FAIL, Status.ERROR)
    trusted_keys = ()

    def __init__(self, problem: Problem, key: str, path: Path, trusted, clock: Clock, *, jit: bool,
                 call_seconds: float, memory_mib: int, launch: Launch):
        super().__init__(problem, key, path, trusted, clock, jit=jit, call_seconds=call_seconds,
                         memory_mib=memory_mib)
        self.launch = launch
        self.source = path.read_bytes()
        self.first = launch.learner
        self.loaded = False
        self.second: Worker | None = None
        self.fetches: list[Fetch] = []
        self.memo: dict[str, Returned | WorkerFailure] = {}
        self.bound = 0  # the most bytes one answer of the current batches may carry
        self.due_bound: int | None = None
        self.values: dict | None = None  # the answer to ask_values, once taken
        self.output_mark: str | None = None

    # -- starting ----------------------------------------------------------------------------------------

    def load(self) -> None:
        """Learner code starts here: after everything trusted has been read."""
        if not self.loaded:
            self.first.request(*self._load_request())

    def _load_request(self):
        return load_request(self.problem, self.key, self.path, self.source, self.memory_mib)

    def ready(self) -> None:
        """Wait for the file to be loaded; a file that does not load ends the run."""
        if self.loaded:
            return
        try:
            reply = self.receive(0, "load")
        except WorkerFailure as failure:
            raise StopGrading(self.failure_outcome("loading your file", {}, failure)) from None
        if not reply.ok:
            err = reply.error
            status = Status.NOT_STARTED if err["kind"] == "not_implemented" else Status.ERROR
            raise StopGrading(Outcome("loading your file", {}, status, error_message(err), error=err))
        self.loaded = True

    def restart(self) -> None:
        """A fresh first worker (after one died partway through a batch), loaded."""
        self.first.close()
        self.first = Worker(self.launch.spec, self.launch.zygote)
        self.loaded = False
        self.load()
        self.ready()

    def malformed(self, why: str, worker: Worker | None = None) -> WorkerFailure:
        """The failure of a worker whose answer was malformed (``why``), the worker ended (``worker``, or, where
        it is not known which one sent it, both): what it sends after a forged answer cannot be told apart
        from its answers."""
        for one in [worker] if worker is not None else [self.first, self.second]:
            if one is not None:
                one.kill()
        return super().malformed(why, worker)

    # -- batches -----------------------------------------------------------------------------------------

    def ask_batch(self, unique: list[tuple[str, dict]], split: bool) -> None:
        """Ask for the answers on ``unique`` (digest, args) in one batch, or (``split``) in two with no traced
        signature in common, the second on a second worker (see :meth:`take`)."""
        self.ready()
        self.cancel(only=self.first)  # (a batch the second worker still answers stays: see answer_due)
        self.bound = max(self.bound, reply_bound(self.problem, [a for _, a in unique]))
        # (Not after a replay's mark: what a second worker prints could not be told apart from its case's;
        # nor while the second worker still answers an earlier batch: one batch at a time per worker.)
        split = (split and bool(self.launch.zygote) and self.output_mark is None
                 and not self._answering(self.second))
        parts = split_by_signature(self.problem, unique) if split else [unique]
        for i, part in enumerate(parts):
            worker, loading = self._second_worker() if i else (self.first, False)
            worker.request(*batch_request(self.problem, self.key, [a for _, a in part], self.jit))
            self.fetches.append(Fetch(worker, [digest for digest, _ in part], loading=loading,
                                      bounds={digest: reply_bound(self.problem, [a]) for digest, a in part}))

    def _second_worker(self) -> tuple[Worker, bool]:
        """The second worker, and whether its load reply is still to come: the one an earlier batch
        started, where it lives with the file loaded, else a new one."""
        loaded = self.second is not None and self.second.poll() is None and not any(
            f.worker is self.second and f.loading for f in self.fetches)
        if loaded:
            return self.second, False
        if self.second is not None:
            self.second.kill()
        self.second = Worker(self.launch.spec, self.launch.zygote)
        self.second.request(*self._load_request())
        return self.second, True

    def _answering(self, worker: Worker | None) -> bool:
        """Whether ``worker`` still owes answers to a batch."""
        return worker is not None and any(f.worker is worker and f.pending for f in self.fetches)

    def answer_due(self, digest: str) -> bool:
        """Whether a batch still on its way holds the answer for the input of ``digest``."""
        return any(digest in f.pending for f in self.fetches)

    def take(self, digest: str) -> Returned | WorkerFailure | None:
        """The answer for the input of ``digest``, received now if a batch has it on its way (answers before
        it are kept); None where no batch holds it (a case outside them, or one a failed batch left)."""
        fetch = next((f for f in self.fetches if digest in f.pending), None)
        if fetch is not None:
            self._take_pending(fetch, until=digest)
        return self.memo.pop(digest, None)

    def kept_array(self, digest: str) -> np.ndarray | None:
        """The flat output among the answers received ahead for the input of ``digest``, taken, if one is there."""
        found = flat_array(self.memo.get(digest))
        if found is not None:
            del self.memo[digest]
        return found

    def outputs(self, missing: list[tuple[str, dict]]) -> dict[str, np.ndarray]:
        """The flat outputs on ``missing`` (digest, args) by digest, in one batch, split between two workers as
        a grade's is (those a batch still brings, the second worker's from the grade, come from it). Where a
        worker fails or the run's time is up, the rest are left out; no array came back for those not given."""
        self.settle()
        asked = [(d, a) for d, a in missing if not self.answer_due(d)]
        if asked:
            self.ask_batch(asked, split=all(self.trusted.cached("reference", a) is not None for _, a in asked))
        found = {}
        for d, _ in missing:
            try:
                answer = self.take(d)
            except StopGrading:  # the run's time is up: the rest are left out
                break
            if (array := flat_array(answer)) is not None:
                found[d] = array
        self.cancel()
        return found

    def _take_pending(self, fetch: Fetch, until: str) -> None:
        """Receive ``fetch``'s answers into ``memo``, up to the one for digest ``until``. What a second
        worker leaves unanswered (it cannot load the file, or dies) the first answers, case by case."""
        if not self._loaded(fetch):
            return
        while fetch.pending:
            digest = fetch.pending.pop(0)
            fetch.received += 1
            try:
                self.memo[digest] = self.receive(fetch.bounds.get(digest, self.bound), "batch", fetch.worker)
            except WorkerFailure as failure:
                if fetch.worker is not self.first:  # the second worker: its cases are asked again one by one
                    self._drop(fetch)
                    return
                if fetch.received == 1:  # that case alone: the verdict is known
                    self.memo[digest] = failure
                else:  # somewhere in the batch: start afresh, one case at a time
                    self.restart()
                fetch.pending = []
                return
            if digest == until:
                return

    def _loaded(self, fetch: Fetch) -> bool:
        """Whether ``fetch``'s worker has the file loaded (its load reply taken, if still to come); a second
        worker that could not load it is dropped."""
        try:
            if fetch.loading:
                fetch.loading = False
                if not self.receive(0, "load", fetch.worker).ok:
                    raise WorkerFailure("crash", "the second worker could not load the file")
        except WorkerFailure:
            self._drop(fetch)
            return False
        return True

    def _drop(self, fetch: Fetch) -> None:
        fetch.worker.kill()
        fetch.pending = []

    def cancel(self, only: Worker | None = None) -> None:
        """Stop the rest of the batches (``only``'s, where given); answers already on their way are kept."""
        for fetch in self.fetches:
            if not fetch.pending or only is not None and fetch.worker is not only:
                continue
            # A second worker still loading the file is let finish (the batch that tells mistakes apart takes
            # it up again, where a new one would load and compile afresh); then its batch stops like any.
            if not self._loaded(fetch):
                continue

            def keep(reply, fetch: Fetch = fetch) -> None:
                if fetch.pending:
                    self.memo[fetch.pending.pop(0)] = reply

            cancel_batch(fetch.worker, keep, timeout=max(min(self.call_seconds, self.clock.remaining()), 1.0),
                         max_bytes=self.bound)
            fetch.pending = []

    # -- single requests ---------------------------------------------------------------------------------

    def ask(self, request: operations.Request) -> None:
        """Send one request to the first worker, once it is free: its batch stopped, a due reply taken (the
        second worker goes on with its own)."""
        self.cancel(only=self.first)
        self.settle()
        self.first.request(*request)

    def call(self, args: dict) -> None:
        """Ask for the answer on ``args`` alone; :meth:`receive` takes it."""
        self.ask(call_request(self.problem, self.key, args, self.jit))

    def ask_reference(self, args: dict) -> Callable[[], np.ndarray]:
        """Ask the reference for its output on ``args``, computed in its worker while the learner's call runs
        in this one; the function returned takes it once the learner's answer has come."""
        self.trusted.request("reference", args)
        return partial(self.trusted.collect, "reference", args)

    def ask_values(self, args: dict) -> bool:
        """Start the first worker finding the initial values of its parameters on ``args``; its reply stays
        due (any other request first takes it: :meth:`settle`) until :meth:`take_values`. True: the learner's
        code reports its values."""
        self.ready()
        self.ask(operations.params(self.key, self.problem.args, args, values=True))
        self.due_bound = VALUES_BYTES
        return True

    def bound_values(self, reference: dict) -> None:
        """The values due may take twice the bytes of the reference's (``{path: array}``), where it has some."""
        if self.due_bound is not None and reference:
            self.due_bound = 2 * sum(v.nbytes for v in reference.values()) + 4096

    def settle(self) -> None:
        """Take the reply to :meth:`ask_values`, if one is due, before the worker is asked anything else."""
        bound, self.due_bound = self.due_bound, None
        if bound is None:
            return
        try:
            self.values = self.receive(bound, "params").values
        except (WorkerFailure, StopGrading):
            self.first.kill()  # its late answer must not be taken for a later request's
            self.values = None

    def take_values(self) -> dict | None:
        self.settle()
        values, self.values = self.values, None
        return values

    def ask_tree(self, args: dict) -> Worker:
        """Ask for the shapes of the graded module's parameter tree on ``args``; :meth:`receive` from the worker
        returned, with "params", takes it."""
        self.ask(operations.params(self.key, self.problem.args, args))
        return self.first

    def mark_output(self) -> None:
        """From here on, what the learner's code prints is not the graded case's: a mark in its output says
        where that begins (:meth:`close` leaves the rest out). Nothing is marked where the worker fails."""
        token = f"\n[grader mark {secrets.token_hex(16)}]\n"
        try:
            self.ask(operations.mark(token))
            self.receive(0, "mark")
            self.output_mark = token
        except WorkerFailure:
            pass

    def close(self) -> str:
        """End the workers; what the learner's code printed (up to the mark, where :meth:`mark_output` made
        one)."""
        for worker in (self.first, self.second):
            if self._answering(worker):  # busy: a request to quit would wait for its batch
                worker.kill()
        self.first.close()
        printed = self.first.output.text()
        if self.output_mark is not None and self.output_mark in printed:
            printed, _, later = printed.partition(self.output_mark)
            if later.strip():
                printed += ("" if printed.endswith("\n") or not printed else "\n") + REPLAY_LEFT_OUT
        if self.second is not None:
            self.second.close()
            if self.second.output.text().strip():
                printed += f"\n{SECOND_PROCESS}\n" + self.second.output.text()
        return printed


def flat_array(answer: Returned | WorkerFailure | None) -> np.ndarray | None:
    """The flat output an answer holds, if it holds one."""
    if answer is None or isinstance(answer, WorkerFailure) or not answer.ok or answer.result.array is None:
        return None
    return answer.result.array.reshape(-1)


def error_message(err: dict) -> str:
    """What a learner's error (a worker's error reply) reads as."""
    from grader.problem.checkout import relative

    where = relative(err["file"]) if err.get("file") else "your file"
    if err.get("line"):
        where = f"{where}, line {err['line']}"
    if err["kind"] == "not_implemented":
        return "your function still raises NotImplementedError: fill in the TODO in " + where
    if err["kind"] == "signature":
        return f"{err['message']} ({where})"
    if err["kind"] == "memory":
        return f"your code ran out of memory ({err['type']}: {err['message']}) at {where}"
    if err["kind"] == "exit":
        return f"your code called sys.exit ({err['message']}) at {where}; return the result instead"
    during = "while importing your file" if err.get("during") == "import" else "in your function"
    return f"{err['type']} {during}: {err['message']} ({where})"
