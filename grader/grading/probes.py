"""What the reference is asked besides its outputs, each kept on disk where it can be: its module calls
recorded on an input, its parameters' initial values, and its output on another module's values."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from grader.core import kinds
from grader.grading.cache import ReferenceCache
from grader.grading.errors import ReferenceError
from grader.grading.requests import reply_bound
from grader.grading.sources import TrustedSources
from grader.grading.trusted_worker import LOAD_SECONDS, TrustedWorker
from grader.problem.problems import Problem
from grader.problem.checkout import relative
from grader.sandbox import operations

CAPTURE_BYTES = 256 << 20  # a model's recorded module calls: inputs, outputs and variables of each
CALLS_KEPT = 4  # inputs whose recorded module calls are kept on disk (a learner's latest failures)


class CapturedCalls:
    """The reference's calls of the problem's parts, recorded in ``worker`` (see
    :mod:`grader.sandbox.intercept`) and kept on disk for the last few inputs: a learner's re-grade of the
    same failure then starts no reference worker for them."""

    def __init__(self, problem: Problem, folder: Path | None, sources: TrustedSources, worker: TrustedWorker):
        self.problem, self.folder, self.sources, self.worker = problem, folder, sources, worker
        self.cache: ReferenceCache | None = None  # read on first need: a passing grade never loads it

    def capture(self, args: dict) -> tuple[list[dict], list[np.ndarray]]:
        """The reference's calls of the problem's parts on ``args``, in the order they finish, and the arrays
        they refer to."""
        if self.cache is None:
            self.cache = ReferenceCache(self.folder, f"{self.problem.slug}.calls", self.sources.depends_on())
        recorded = {"classes": self.problem.parts(), "methods": self.problem.methods(),
                    "functions": self.problem.helpers()}
        # Kept by the input and by what was recorded (the parts the stub asks for).
        digest = hashlib.sha256(f"{kinds.args_digest(self.problem.args, args)}\0{json.dumps(recorded)}".encode())
        digest = digest.hexdigest()[:32]
        kept = self.cache.get(f"{digest}-calls")
        if kept is not None:
            calls, count = json.loads(kept.tobytes())
            arrays = [self.cache.get(f"{digest}-{i}") for i in range(count)]
            if all(a is not None for a in arrays):
                return calls, arrays
        self.worker.start().request(*operations.capture("reference", self.problem.args, args, **recorded))
        reply = self.worker.receive(LOAD_SECONDS, CAPTURE_BYTES, "capture")
        if not reply.ok:
            err = reply.error
            raise ReferenceError(f"{relative(self.problem.reference)} raised {err['type']}: {err['message']} "
                                 f"while its module calls were recorded on {self.problem.call_text(args)}")
        if sum(key.endswith("-calls") for key in self.cache.entries) >= CALLS_KEPT:
            self.cache.entries.clear()  # the inputs of earlier failures: make room
        listing = json.dumps([reply.calls, len(reply.arrays)]).encode()
        self.cache.put(f"{digest}-calls", np.frombuffer(listing, np.uint8))
        for i, array in enumerate(reply.arrays):
            self.cache.put(f"{digest}-{i}", array)
        return reply.calls, reply.arrays

    def save(self) -> None:
        if self.cache is not None:
            self.cache.save()


class ParameterValues:
    """The reference's parameters: their initial values, kept on disk by traced signature (a learner's
    re-grade then needs no reference worker for them), and its output with other values in their place."""

    def __init__(self, problem: Problem, folder: Path | None, sources: TrustedSources, worker: TrustedWorker):
        self.problem, self.worker = problem, worker
        self.cache = ReferenceCache(folder, f"{problem.slug}.parameters", sources.depends_on())

    def initial(self, args: dict) -> dict[str, np.ndarray] | None:
        """The initial values of the reference's parameters at ``args``'s signature, by path (None where it
        creates none)."""
        signature = repr(kinds.signature(self.problem.args, kinds.with_moved(args, False)))
        key = hashlib.sha256(signature.encode()).hexdigest()[:16]
        listed = self.cache.get(f"{key}-paths")
        if listed is None:
            self.worker.start().request(*operations.params("reference", self.problem.args, args, values=True))
            found = self.worker.receive(LOAD_SECONDS, CAPTURE_BYTES, "params").values or {}
            listed = np.frombuffer(json.dumps(sorted(found)).encode(), dtype=np.uint8)
            self.cache.put(f"{key}-paths", listed)
            for i, path in enumerate(sorted(found)):
                self.cache.put(f"{key}-{i}", found[path])
        paths = json.loads(listed.tobytes())
        values = {path: self.cache.get(f"{key}-{i}") for i, path in enumerate(paths)}
        return values if values and all(v is not None for v in values.values()) else None

    def substituted(self, args: dict, values: dict[str, np.ndarray]) -> np.ndarray | None:
        """The reference's flat output on ``args`` where its parameters take ``values`` (``{path: array}``, those
        of another module's initial parameters) in place of their initial values, each where its shape is
        the reference's parameter's; None where it raises there. Not kept: ``values`` are a learner's."""
        bound = reply_bound(self.problem, [args])
        self.worker.start().request(*operations.substitute("reference", self.problem.args, args, values, bound))
        reply = self.worker.receive(LOAD_SECONDS, bound, "substitute")
        if not reply.ok or reply.result.array is None:
            return None
        return reply.result.array.reshape(-1)

    def save(self) -> None:
        self.cache.save()
