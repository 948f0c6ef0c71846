"""One worker running trusted modules: its process, the modules loaded in it, and the answers on their way."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from grader.core import kinds
from grader.grading.errors import ReferenceError, TrustedFailure, TrustedTimeout
from grader.grading.requests import batch_request, call_request, cancel_batch, load_request, reply_bound
from grader.grading.sources import TrustedSources
from grader.problem.problems import Problem
from grader.problem.checkout import relative
from grader.sandbox.pool import Spec, Worker, WorkerFailure

LOAD_SECONDS = 120.0


class TrustedWorker:
    """A worker for the trusted modules, started on first need (and afresh after one died), with every module
    of ``sources`` loaded; the single request last sent, or the batch still being answered (``pending``).

    Each answer goes through ``keep(key, args, jit, reply)``, which checks it and keeps it
    (:meth:`grader.grading.kept.KeptOutputs.keep`). No wait goes past ``deadline`` (a run's own limit)
    while one is set. ``zygote`` forks the worker when given (only when learner code is confined: a process
    an unconfined learner worker could reach never runs the reference); else it starts afresh."""

    def __init__(self, problem: Problem, sources: TrustedSources, folder: Path | None, zygote,
                 keep: Callable[[str, dict, bool, object], np.ndarray], deadline: float | None = None):
        self.problem, self.sources, self.folder, self.zygote, self.keep = problem, sources, folder, zygote, keep
        self.deadline = deadline
        self.process: Worker | None = None
        self.modules: set[str] = set()
        self.unacknowledged: list[str] = []  # modules whose load reply is still to come
        self.pending: list[tuple[str, str, dict]] = []  # (key, digest, args) of batch answers to come
        self.direct_jit = True  # the mode of the last single request

    def start(self) -> Worker:
        """The process, with every module loaded; one started afresh loads them all again. Every load is sent
        before any request (their replies come first: see :meth:`acknowledge`). Anything new sent to the
        worker first cancels the rest of a pending batch."""
        self.cancel_pending()
        if self.process is not None and self.process.poll() is not None:
            self.process.close()  # died (a trusted module misbehaved): start afresh
            self.process = None
            self.modules.clear()
        if self.process is None:
            folder = self.folder
            self.process = Worker(Spec(confine=False, compile_cache=str(folder / "jax-trusted") if folder else ""),
                                  self.zygote)
        for key, path, source in self.sources.items():  # the reference first
            if key not in self.modules:
                self.process.request(*load_request(self.problem, key, path, source))
                self.modules.add(key)
                self.unacknowledged.append(key)  # checked when the next reply is awaited (meanwhile JAX imports)
        return self.process

    def left(self, timeout: float) -> float:
        """``timeout``, cut to the time the run has left."""
        return timeout if self.deadline is None else min(timeout, max(self.deadline - time.monotonic(), 0.1))

    def receive(self, timeout: float, max_bytes: int, expect: str):
        """The next reply, within ``timeout`` and the time left; a failure of the worker raises
        :class:`TrustedFailure` (:class:`TrustedTimeout` where it did not answer in time)."""
        timeout = self.left(timeout)
        try:
            self.acknowledge()
            return self.process.receive(timeout, max_bytes, expect)
        except WorkerFailure as failure:
            self.pending = []
            if failure.kind == "timeout":
                raise TrustedTimeout(f"the reference's worker did not answer within {timeout:.0f} s") from None
            raise TrustedFailure(f"the worker running the reference of {self.problem.slug} failed: "
                                 f"{failure.message}") from None

    def acknowledge(self) -> None:
        """Check the load replies still to come (they come before any other)."""
        while self.unacknowledged:
            key = self.unacknowledged.pop(0)
            try:
                reply = self.process.receive(self.left(LOAD_SECONDS), 0, "load")
            except WorkerFailure:
                self.unacknowledged = []
                raise
            if not reply.ok:
                err = reply.error
                self.unacknowledged = []
                where = f", line {err['line']}" if err["line"] else ""
                raise ReferenceError(f"{relative(self.sources.paths[key])} failed to load: {err['type']}: "
                                     f"{err['message']}{where}")

    # -- outputs ---------------------------------------------------------------------------------------------

    def request(self, key: str, args: dict, jit: bool = True) -> None:
        self.start().request(*call_request(self.problem, key, args, jit))
        self.direct_jit = jit

    def request_batch(self, key: str, cases: list[dict]) -> None:
        """Ask for ``key``'s outputs on all ``cases``; :meth:`collect` takes them as they are needed."""
        self.start().request(*batch_request(self.problem, key, cases, jit=True))
        self.pending = [(key, self.digest(args), args) for args in cases]

    def digest(self, args: dict) -> str:
        return kinds.args_digest(self.problem.args, args)

    def is_pending(self, key: str, args: dict) -> bool:
        digest = self.digest(args)
        return any(p[:2] == (key, digest) for p in self.pending)

    def cancel_pending(self) -> None:
        """Stop the rest of a batch (the worker is needed for something else, or not at all)."""
        if not self.pending:
            return

        def keep(reply) -> None:
            if self.pending:
                key, _, args = self.pending.pop(0)
                try:
                    self.keep(key, args, True, reply)
                except ReferenceError:
                    pass

        try:
            self.acknowledge()
            cancel_batch(self.process, keep, self.left(LOAD_SECONDS),
                         reply_bound(self.problem, [a for *_, a in self.pending]))
        except (ReferenceError, WorkerFailure):
            pass
        self.pending = []

    def collect(self, key: str, args: dict, timeout: float = 300) -> np.ndarray:
        """``key``'s answer for ``args``: from the pending batch (answers before it are kept), or else
        the answer to the last request."""
        digest = self.digest(args)
        if self.is_pending(key, args):
            while self.pending:
                pkey, pdigest, pargs = self.pending.pop(0)
                output = self.keep(pkey, pargs, True,
                                   self.receive(timeout, reply_bound(self.problem, [pargs]), "batch"))
                if (pkey, pdigest) == (key, digest):
                    return output
        return self.keep(key, args, self.direct_jit,
                         self.receive(timeout, reply_bound(self.problem, [args]), "call"))

    def close(self) -> None:
        """End the process (what it computed is kept), the rest of a batch cancelled first."""
        self.cancel_pending()
        if self.process is not None:
            self.process.close()
            self.process = None
            self.modules.clear()
