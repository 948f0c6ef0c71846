"""The trusted side of a run: the reference (and the known-wrong and correct variants) in a worker of
their own, and the outputs kept on disk.

Everything here is read before learner code starts: the reference's source, the grading hooks, the
cached outputs, the statement's expected outputs and ``golden.json``. Every reference output, cached or
fresh, that the statement or the golden file also gives is checked against them: a cached one that
disagrees is dropped and computed again, a fresh one that disagrees is a broken problem
(:class:`ReferenceError`), never a verdict on the learner.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from pathlib import Path

import numpy as np

from grader.grading import cache as cache_mod
from grader.core import kinds
from grader.core.compare import agrees
from grader.sandbox.pool import Spec, Worker, WorkerFailure
from grader.problem.problems import Problem, cache_folder, relative

LOAD_SECONDS = 120.0
SHARE_FROM = 4  # modules to run on one input from which a second worker takes half of them
CAPTURE_BYTES = 256 << 20  # a model's recorded module calls: inputs, outputs and variables of each
CALLS_KEPT = 4  # inputs whose recorded module calls are kept on disk (a learner's latest failures)


class ReferenceError(RuntimeError):
    """A trusted module failed, or the reference disagrees with the statement: the problem is broken."""


class TrustedFailure(ReferenceError):
    """The trusted worker itself failed (it ended, or did not answer), not a module it runs: nothing can be
    said about a module's outputs from it."""


class TrustedTimeout(TrustedFailure):
    """The trusted worker did not answer within the time left to the run."""


def reply_bound(problem: Problem, cases: list[dict]) -> int:
    """The most array bytes a reply to these calls may carry: any dtype at the expected size."""
    return max((16 * int(np.prod(problem.natural_shape(args))) for args in cases), default=0) + 4096


def load_request(problem: Problem, key: str, path: Path, source: bytes, memory_mib: int = 0):
    return ({"op": "load", "key": key, "path": str(path), "entry": problem.slug, "arg_names": list(problem.args),
             "memory_mib": memory_mib, "moves": problem.moves_parameters}, [np.frombuffer(source, dtype=np.uint8)])


def call_request(problem: Problem, key: str, args: dict, jit: bool):
    arrays: list = []
    return ({"op": "call", "key": key, "args": kinds.encode(problem.args, args, arrays), "jit": jit,
             "moved": kinds.moved(args), "max_bytes": reply_bound(problem, [args])}, arrays)


def batch_request(problem: Problem, key: str, cases: list[dict], jit: bool):
    arrays: list = []
    calls = [{"args": kinds.encode(problem.args, args, arrays), "moved": kinds.moved(args),
              "max_bytes": reply_bound(problem, [args])} for args in cases]
    return {"op": "batch", "key": key, "calls": calls, "jit": jit}, arrays


def cancel_batch(worker: Worker, keep, timeout: float, max_bytes: int) -> None:
    """Ask ``worker`` to stop its batch; replies already on their way go to ``keep(reply)``."""
    worker.request({"op": "cancel"})
    while True:
        try:
            reply = worker.receive(timeout, max_bytes, "cancel")
        except WorkerFailure:
            return
        if reply.op == "cancelled":
            return
        keep(reply)


class Trusted:
    """The reference's worker, started on first need, and the outputs kept between runs.

    ``zygote`` forks the worker when given (only when learner code is confined: a process an
    unconfined learner worker could reach never runs the reference); else it starts afresh."""

    recorded = False  # see grader.grading.recorded.Recorded: the answers of a handout, recorded from this

    def __init__(self, problem: Problem, use_cache: bool = True, zygote=None, golden_pitfalls: bool = True):
        """``golden_pitfalls``: take the known mistakes' outputs that golden.json keeps (`grade check`, which
        checks them, computes its own)."""
        self.problem = problem
        self.seed_golden = golden_pitfalls
        self.zygote = zygote
        self.sources = {"reference": problem.reference.read_bytes()}  # every module loaded, read once
        self.hooks = problem.hooks()
        self.cache_folder = cache_folder(problem.root) if use_cache else None
        self.hook_sources = [problem.solution_folder / "grading.py"] if self.hooks else []
        self.hook_bytes = [path.read_bytes() for path in self.hook_sources]  # read once, like the sources
        self.caches = {("reference", True): cache_mod.ReferenceCache(
            self.cache_folder, problem.slug, [problem.reference] + self.hook_sources)}
        self.trees = cache_mod.TreeCache(self.cache_folder, problem.slug, [problem.reference] + self.hook_sources)
        self.values = cache_mod.ReferenceCache(self.cache_folder, f"{problem.slug}.parameters",
                                               [problem.reference] + self.hook_sources)
        self.calls: cache_mod.ReferenceCache | None = None  # recorded module calls (capture), read on first need
        # Known mistakes' outputs on the fixed examples, kept in golden.json by `grade check --update-golden`
        # (name -> [(the variant's source key, input digest, output)]): naming a mistake on a fixed example then
        # runs none of them, even on a fresh clone. Used only while the variant's source is the one they came from.
        self.golden_pitfalls: dict[str, list[tuple[str, str, np.ndarray]]] = {}
        self.known = self._known_outputs()
        for digest in list(self.caches["reference", True].entries):
            self._verify_cached(digest)
        self.paths: dict[str, Path] = {"reference": problem.reference}
        self.deadline: float | None = None  # no wait here goes past it (a run's own limit: see limit)
        self._new_worker_state()

    def _new_worker_state(self) -> None:
        """What belongs to one worker, none started yet; everything else (what was read, the caches) a twin
        shares (:meth:`outputs_on`)."""
        self.worker: Worker | None = None
        self.modules: set[str] = set()
        self.unacknowledged: list[str] = []  # modules whose load reply is still to come
        self.pending: list[tuple[str, str, dict]] = []  # (key, digest, args) of batch answers to come
        self.direct_jit = True  # the mode of the last single request
        self.twin: Trusted | None = None  # a second worker for the same modules, started on first need

    def limit(self, deadline: float | None) -> None:
        """No wait here, nor in the twin, goes past ``deadline`` (a run's own limit) until ``limit(None)``."""
        self.deadline = deadline
        if self.twin is not None:
            self.twin.deadline = deadline

    # -- what the statement and the golden file say -----------------------------------------------------

    def _known_outputs(self) -> dict[str, tuple[str, dict, np.ndarray]]:
        """The reference's outputs the statement and golden.json give, by input digest; golden.json's outputs
        of the known mistakes go to :attr:`golden_pitfalls`."""
        known = {}
        for ex in self.problem.examples:
            if ex.expected is not None:
                known[self.digest(ex.args)] = (f"the statement's example {ex.name!r}", ex.args, ex.expected.reshape(-1))
        path = self.problem.solution_folder / "golden.json"
        if path.is_file():
            from grader.problem.cases import case_from_json

            for entry in json.loads(path.read_text()):
                args = case_from_json(self.problem, entry["args"])
                digest = self.digest(args)
                output = np.asarray(entry["output"], dtype=self.problem.output_dtype).reshape(-1)
                known.setdefault(digest, (f"golden.json's {entry['name']!r}", args, output))
                for name, stored in (entry.get("pitfalls") or {}).items():
                    self.golden_pitfalls.setdefault(name, []).append(
                        (stored["source"], digest, np.asarray(stored["output"], dtype=self.problem.output_dtype)))
        return known

    def _disagreement(self, digest: str, output: np.ndarray) -> str | None:
        if digest not in self.known:
            return None
        where, args, expected = self.known[digest]
        if output.shape == expected.shape and self.agrees(args, expected, output):
            return None
        return where

    def _verify_cached(self, digest: str) -> None:
        cache = self.caches["reference", True]
        if self._disagreement(digest, cache.entries[digest]) is not None:
            cache.drop(digest)

    def agrees(self, args: dict, expected: np.ndarray, got: np.ndarray) -> bool:
        """Whether ``got`` is an acceptable answer where ``expected`` is the reference's (both flat)."""
        return agrees(self.problem, args, expected, got, self.accept_also(args, expected))

    def digest(self, args: dict) -> str:
        return kinds.args_digest(self.problem.args, args)

    # -- the worker --------------------------------------------------------------------------------------

    def register(self, modules: dict[str, Path]) -> None:
        """Make ``modules`` (key -> path) known, with their caches; they are loaded when the worker starts
        for something (outputs that are all cached start no worker)."""
        for key, path in modules.items():
            for jit in (True, False):
                if (key, jit) not in self.caches:
                    name = f"{self.problem.slug}.{key}.{'jit' if jit else 'eager'}"
                    # The reference's source counts too: a variant may be the reference with one override.
                    sources = [path, self.problem.reference] + self.hook_sources
                    self.caches[key, jit] = cache_mod.ReferenceCache(self.cache_folder, name, sources)
            if key not in self.sources:
                self.sources[key], self.paths[key] = path.read_bytes(), path
            stored = self.golden_pitfalls.get(key.removeprefix("pitfall_"), []) if self.seed_golden else []
            if stored and key.startswith("pitfall_"):
                source = self.variant_source_key(key)
                for found, digest, output in stored:
                    if found == source:
                        self.caches[key, True].entries.setdefault(digest, output)

    def variant_source_key(self, key: str) -> str:
        """What a known mistake's outputs depend on, as a short hash: its module, the reference it may
        override and the problem's grading hooks (not the grader's fingerprint: golden.json is committed)."""
        h = hashlib.sha256()
        for part in (self.sources[key], self.sources["reference"], *self.hook_bytes):
            h.update(part + b"\0")
        return h.hexdigest()[:16]

    def start(self, modules: dict[str, Path] | None = None) -> Worker:
        """The worker, started on first need, with the reference, every registered module and ``modules``
        (key -> path) loaded; a worker started afresh loads them all again. Every load is sent before any
        request (their replies come first: see :meth:`acknowledge`). Anything new sent to the worker first
        cancels the rest of a pending batch."""
        self.cancel_pending()
        if self.worker is not None and self.worker.poll() is not None:
            self.worker.close()  # died (a trusted module misbehaved): start afresh
            self.worker = None
            self.modules.clear()
        self.register(modules or {})
        if self.worker is None:
            folder = self.cache_folder
            self.worker = Worker(Spec(confine=False, compile_cache=str(folder / "jax-trusted") if folder else ""),
                                 self.zygote)
        for key, source in self.sources.items():  # the reference first
            if key not in self.modules:
                self._load(key, self.paths[key], source)
        return self.worker

    def _load(self, key: str, path: Path, source: bytes) -> None:
        """Send a load; its reply is checked when the next reply is awaited (meanwhile JAX imports)."""
        self.worker.request(*load_request(self.problem, key, path, source))
        self.modules.add(key)
        self.unacknowledged.append(key)

    def _left(self, timeout: float) -> float:
        """``timeout``, cut to the time the run has left."""
        return timeout if self.deadline is None else min(timeout, max(self.deadline - time.monotonic(), 0.1))

    def _receive(self, timeout: float, max_bytes: int, expect: str = "result"):
        timeout = self._left(timeout)
        try:
            self.acknowledge()
            return self.worker.receive(timeout, max_bytes, expect)
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
                reply = self.worker.receive(self._left(LOAD_SECONDS), 0, "loaded")
            except WorkerFailure:
                self.unacknowledged = []
                raise
            if not reply.ok:
                err = reply.error
                self.unacknowledged = []
                where = f", line {err['line']}" if err["line"] else ""
                raise ReferenceError(f"{relative(self.paths[key])} failed to load: {err['type']}: "
                                     f"{err['message']}{where}")

    def request(self, key: str, args: dict, jit: bool = True) -> None:
        self.start().request(*call_request(self.problem, key, args, jit))
        self.direct_jit = jit

    def request_batch(self, key: str, cases: list[dict]) -> None:
        """Ask for ``key``'s outputs on all ``cases``; ``collect`` takes them as they are needed."""
        self.start().request(*batch_request(self.problem, key, cases, jit=True))
        self.pending = [(key, self.digest(args), args) for args in cases]

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
                    self._store(key, args, True, reply)
                except ReferenceError:
                    pass

        try:
            self.acknowledge()
            cancel_batch(self.worker, keep, self._left(LOAD_SECONDS),
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
                output = self._store(pkey, pargs, True, self._receive(timeout, reply_bound(self.problem, [pargs])))
                if (pkey, pdigest) == (key, digest):
                    return output
        return self._store(key, args, self.direct_jit, self._receive(timeout, reply_bound(self.problem, [args])))

    def _store(self, key: str, args: dict, jit: bool, reply) -> np.ndarray:
        call = self.problem.call_text(args)
        if not reply.ok:
            err = reply.error
            where = f", line {err['line']}" if err["line"] else ""
            raise ReferenceError(f"{relative(self.paths[key])} raised {err['type']}: {err['message']}{where} "
                                 f"on {call}")
        if reply.result.array is None:
            raise ReferenceError(f"{relative(self.paths[key])} returned {reply.result.type} "
                                 f"{reply.result.dtype or ''} {list(reply.result.shape or [])} on {call}")
        output = reply.result.array.reshape(-1)
        digest = self.digest(args)
        if key == "reference":
            if output.size != int(np.prod(self.problem.natural_shape(args))) or output.dtype.name != self.problem.output_dtype:
                raise ReferenceError(f"{relative(self.paths[key])} returned {output.dtype.name} of shape "
                                     f"{reply.result.shape} on "
                                     f"{call}; problem.toml says {self.problem.output_dtype} of shape "
                                     f"{self.problem.natural_shape(args)}")
            where = self._disagreement(digest, output)
            if where is not None:
                raise ReferenceError(f"the reference disagrees with {where} on {call} (does an environment "
                                     f"variable, such as one of JAX_*, XLA_* or FLAX_*, change its numerics?)")
        if (key, jit) in self.caches:
            self.caches[key, jit].put(digest, output)
        return output

    # -- outputs -----------------------------------------------------------------------------------------

    def cached(self, key: str, args: dict, jit: bool = True) -> np.ndarray | None:
        cache = self.caches.get((key, jit))
        return None if cache is None else cache.get(self.digest(args))

    def outputs(self, key: str, cases: list[dict]) -> list[np.ndarray | None]:
        """``key``'s flat outputs on ``cases``, cached or in one batch (None where a variant fails on a
        case; a failure of the reference, or of the worker, raises)."""
        outputs = [self.cached(key, args) for args in cases]
        missing = [args for args, out in zip(cases, outputs) if out is None]
        if missing and not all(self.is_pending(key, args) for args in missing):  # (else: prefetched)
            self.request_batch(key, missing)
        for i, args in enumerate(cases):
            if outputs[i] is None:
                outputs[i] = self._answer(key, args)
        return outputs

    def _answer(self, key: str, args: dict) -> np.ndarray | None:
        """``key``'s answer to its request on ``args``: None where a variant raised there; a failure of the
        reference, or of the worker (which says nothing of any module), raises."""
        try:
            return self.collect(key, args)
        except ReferenceError as exc:
            if key == "reference" or isinstance(exc, TrustedFailure):
                raise
            return None

    def prefetch(self, key: str, cases: list[dict]) -> None:
        """Start computing ``key``'s outputs on ``cases`` (those not cached) while something else runs:
        :meth:`outputs` on the same cases collects them."""
        missing = [args for args in cases if self.cached(key, args) is None]
        if missing:
            self.request_batch(key, missing)

    def outputs_on(self, keys: list[str], args: dict, jit: bool = True,
                   share: bool = False) -> dict[str, np.ndarray | None]:
        """Each of ``keys``' flat output on ``args``, cached or computed (None where a variant raised; a
        failure of a worker raises). Naming a mistake runs every known-wrong variant on the failing input,
        each a program of its own to trace (about a second for a model): with ``share`` (a core is idle
        meanwhile: the learner's worker waits) and several to run, a second worker takes half of them.
        Without it they stay in this worker, which has traced them before in `grade check`."""
        outputs = {key: self.cached(key, args, jit) for key in keys}
        missing = [key for key, out in outputs.items() if out is None]
        sides = [(self, missing)]
        if share and len(missing) >= SHARE_FROM:
            if self.twin is None:
                self.twin = copy.copy(self)  # the same sources, paths and caches; a worker of its own
                self.twin._new_worker_state()
            sides = [(self, missing[::2]), (self.twin, missing[1::2])]
        for side, part in sides:
            for key in part:
                side.request(key, args, jit)
        for side, part in sides:
            for key in part:
                outputs[key] = side._answer(key, args)
        return outputs

    def output(self, key: str, args: dict) -> np.ndarray:
        cached = self.cached(key, args)
        if cached is not None:
            return cached
        self.request(key, args)
        return self.collect(key, args)

    def capture(self, args: dict) -> tuple[list[dict], list[np.ndarray]]:
        """The reference's calls of the problem's parts on ``args`` (see :mod:`grader.sandbox.intercept`), in the
        order they finish, and the arrays they refer to; kept on disk for the last few inputs (a learner's
        re-grade of the same failure then starts no reference worker for them)."""
        if self.calls is None:  # read on first need: a passing grade never loads it
            self.calls = cache_mod.ReferenceCache(self.cache_folder, f"{self.problem.slug}.calls",
                                                  [self.problem.reference] + self.hook_sources)
        recorded = {"classes": self.problem.parts(), "methods": self.problem.methods(),
                    "functions": self.problem.helpers()}
        # Kept by the input and by what was recorded (the parts the stub asks for).
        digest = hashlib.sha256(f"{self.digest(args)}\0{json.dumps(recorded)}".encode()).hexdigest()[:32]
        kept = self.calls.get(f"{digest}-calls")
        if kept is not None:
            calls, count = json.loads(kept.tobytes())
            arrays = [self.calls.get(f"{digest}-{i}") for i in range(count)]
            if all(a is not None for a in arrays):
                return calls, arrays
        arrays: list = []
        self.start().request({"op": "capture", "key": "reference", **recorded,
                              "moved": kinds.moved(args), "args": kinds.encode(self.problem.args, args, arrays)},
                             arrays)
        reply = self._receive(LOAD_SECONDS, CAPTURE_BYTES, "calls")
        if not reply.ok:
            err = reply.error
            raise ReferenceError(f"{relative(self.problem.reference)} raised {err['type']}: {err['message']} "
                                 f"while its module calls were recorded on {self.problem.call_text(args)}")
        if sum(key.endswith("-calls") for key in self.calls.entries) >= CALLS_KEPT:
            self.calls.entries.clear()  # the inputs of earlier failures: make room
        self.calls.put(f"{digest}-calls", np.frombuffer(json.dumps([reply.calls, len(reply.arrays)]).encode(), np.uint8))
        for i, array in enumerate(reply.arrays):
            self.calls.put(f"{digest}-{i}", array)
        return reply.calls, reply.arrays

    def param_values(self, args: dict) -> dict[str, np.ndarray] | None:
        """The initial values of the reference's parameters at ``args``'s signature, by path (None where it
        creates none), kept on disk: a learner's re-grade then needs no reference worker for them."""
        signature = repr(kinds.signature(self.problem.args, kinds.with_moved(args, False)))
        key = hashlib.sha256(signature.encode()).hexdigest()[:16]
        listed = self.values.get(f"{key}-paths")
        if listed is None:
            arrays: list = []
            self.start().request({"op": "params", "values": True, "key": "reference",
                                  "args": kinds.encode(self.problem.args, args, arrays)}, arrays)
            found = self._receive(LOAD_SECONDS, CAPTURE_BYTES, "params").values or {}
            listed = np.frombuffer(json.dumps(sorted(found)).encode(), dtype=np.uint8)
            self.values.put(f"{key}-paths", listed)
            for i, path in enumerate(sorted(found)):
                self.values.put(f"{key}-{i}", found[path])
        paths = json.loads(listed.tobytes())
        values = {path: self.values.get(f"{key}-{i}") for i, path in enumerate(paths)}
        return values if values and all(v is not None for v in values.values()) else None

    def substituted(self, args: dict, values: dict[str, np.ndarray]) -> np.ndarray | None:
        """The reference's flat output on ``args`` where its parameters take ``values`` (``{path: array}``, those
        of another module's initial parameters) in place of their initial values, each where its shape is
        the reference's parameter's; None where it raises there. Not kept: ``values`` are a learner's."""
        paths = sorted(values)
        arrays: list = []
        entries = kinds.encode(self.problem.args, args, arrays)
        bound = reply_bound(self.problem, [args])
        self.start().request({"op": "params", "key": "reference", "args": entries, "substitute": paths,
                              "max_bytes": bound}, arrays + [values[path] for path in paths])
        reply = self._receive(LOAD_SECONDS, bound, "result")
        if not reply.ok or reply.result.array is None:
            return None
        return reply.result.array.reshape(-1)

    def pitfalls(self) -> dict[str, tuple[str, str | None, str]]:
        """The known-wrong variants, loaded in the worker: name -> (its MESSAGE, its DIAGNOSIS or None, its
        STAGE)."""
        from grader.problem.variant import notes

        variants = self.problem.variants("pitfalls")
        self.register({f"pitfall_{name}": path for name, path in variants.items()})
        return {name: notes(path) for name, path in variants.items()}

    def accept_also(self, args: dict, expected: np.ndarray) -> np.ndarray | None:
        hook = getattr(self.hooks, "accept_also", None)
        return None if hook is None else hook(args, expected)

    def close(self) -> None:
        if self.twin is not None and self.twin.worker is not None:
            self.twin.worker.close()  # what it computed is in the caches it shares with this one
        self.twin = None
        self.cancel_pending()
        if self.worker is not None:
            self.worker.close()
            self.worker = None
            self.modules.clear()
        for cache in self.caches.values():
            cache.save()
        self.trees.save()
        self.values.save()
        if self.calls is not None:
            self.calls.save()
