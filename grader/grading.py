"""Grade one submission: fixed examples first, then Hypothesis-generated inputs, shrunk on failure.

Learner code runs only in a worker process; the reference runs in another (or comes from the on-disk
cache); every comparison happens here, on plain arrays.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader import cache as cache_mod
from grader.compare import Comparison, compare
from grader.launch import Launch, Zygote, learner_compile_cache
from grader.problems import Problem, cache_folder, relative
from grader.sandbox import NotAcknowledged, Worker, WorkerFailure

STATUSES = ("pass", "fail", "error", "timeout", "not_started")
SHRINK_SECONDS = 20.0  # time allowed for shrinking once a failure is found
KEEP_FAILURES = 8  # failing cases kept: the last is the smallest, reported if shrinking runs out of time
KEEP_SEEN = 64  # learner outputs kept for telling pitfalls apart


@dataclass
class Outcome:
    """What happened on one input."""

    name: str
    args: dict
    status: str  # one of STATUSES
    message: str
    comparison: Comparison | None = None
    error: dict | None = None  # the worker's description of an exception
    actual: np.ndarray | None = None  # flat, when an array came back


@dataclass
class Verdict:
    problem: str
    status: str
    message: str
    checks: list[dict] = field(default_factory=list)
    counterexample: Outcome | None = None
    pitfall: dict | None = None
    examples_run: int = 0
    duration_s: float = 0.0
    output: str = ""
    params_diff: list[str] = field(default_factory=list)


class StopGrading(BaseException):
    """Ends the run at once. A BaseException, so that Hypothesis neither catches nor shrinks it."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


class CaseFailed(Exception):
    """A failing case; Hypothesis shrinks the input that raised it."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


@dataclass
class Options:
    jit: bool = True
    use_cache: bool = True
    call_seconds: float | None = None
    problem_seconds: float | None = None
    memory_mib: int | None = None


def encode_call(problem: Problem, args: dict, arrays: list | None = None) -> tuple[list[dict], list[np.ndarray]]:
    """The ``args`` list of a call request, in signature order, and the arrays it refers to (appended to
    ``arrays`` when given, so that several calls can share one message)."""
    entries, arrays = [], [] if arrays is None else arrays
    for name, kind in problem.args.items():
        value = args[name]
        if kind.startswith("array:"):
            entries.append({"name": name, "kind": "array", "index": len(arrays)})
            arrays.append(value)
        else:
            entries.append({"name": name, "kind": kind, "value": value})
    return entries, arrays


class Trusted:
    """The trusted side of a problem: the reference (and variants) in their own worker, and the cache.

    Shared by every grading of one problem in ``grade check``; everything it needs from disk is read
    when it is created, before any learner code starts.
    """

    def __init__(self, problem: Problem, use_cache: bool = True):
        self.problem = problem
        self.zygote: Zygote | None = None  # where the worker is forked from (a fresh start without one)
        self.reference_source = problem.reference.read_text()
        self.hooks = problem.hooks()
        self.cache_folder = cache_folder(problem.root) if use_cache else None
        self.hook_sources = [problem.solution_folder / "grading.py"] if self.hooks else []
        self.cache = cache_mod.ReferenceCache(self.cache_folder, problem.slug, [problem.reference] + self.hook_sources)
        # (key, jit) -> outputs cache of every trusted module loaded: jit and eager may round differently
        self.caches = {("reference", True): self.cache}
        self.worker: Worker | None = None
        self.modules: set[str] = set()
        self.pending: list[tuple[str, str, dict]] = []  # (key, digest, args) of batch answers to come
        self.direct_jit = True  # the mode of the last single request

    def start(self, modules: dict[str, Path] | None = None) -> Worker:
        """The worker, started on first need, with the reference and ``modules`` (key -> path) loaded.

        Anything new sent to the worker first cancels the rest of a pending batch."""
        self.cancel_pending()
        if self.worker is not None and self.worker.proc.poll() is not None:
            self.worker.close()  # died (a trusted module misbehaved): start afresh
            self.worker = None
            self.modules.clear()
        if self.worker is None:
            folder = self.cache_folder
            self.worker = Worker(compile_cache=str(folder / "jax-trusted") if folder else None, zygote=self.zygote)
            # Checked when the first answer is received: meanwhile the worker imports JAX.
            self.worker.request(load_message(self.problem, "reference", self.problem.reference, self.reference_source),
                                acknowledge=f"loading the reference of problem {self.problem.slug}")
            self.modules.add("reference")
        for key, path in (modules or {}).items():
            for jit in (True, False):
                if (key, jit) not in self.caches:
                    name = f"{self.problem.slug}.{key}.{'jit' if jit else 'eager'}"
                    # The reference's source counts too: a variant may be the reference with one override.
                    sources = [path, self.problem.reference] + self.hook_sources
                    self.caches[key, jit] = cache_mod.ReferenceCache(self.cache_folder, name, sources)
            if key not in self.modules:
                self.worker.request(load_message(self.problem, key, path, path.read_text()))
                self.modules.add(key)
                self._expect_loaded(key)
        return self.worker

    def _expect_loaded(self, key: str) -> None:
        header, _ = self.worker.receive(timeout=120)
        if not header.get("ok"):
            err = header.get("error", {})
            raise RuntimeError(f"{key} of problem {self.problem.slug} failed to load: "
                               f"{err.get('type')}: {err.get('message')}\n{err.get('traceback', '')}")

    def request(self, key: str, args: dict, jit: bool = True) -> None:
        entries, arrays = encode_call(self.problem, args)
        self.start().request({"op": "call", "key": key, "args": entries, "jit": jit}, arrays)
        self.direct_jit = jit

    def request_batch(self, key: str, cases: list[dict]) -> None:
        """Ask for ``key``'s outputs on all ``cases``; ``collect`` takes them as they are needed."""
        self.start().request(*batch_message(self.problem, key, cases, jit=True))
        self.pending = [(key, cache_mod.args_digest(args), args) for args in cases]

    def is_pending(self, key: str, args: dict) -> bool:
        digest = cache_mod.args_digest(args)
        return any(p[:2] == (key, digest) for p in self.pending)

    def cancel_pending(self) -> None:
        """Stop the rest of a batch (the worker is needed for something else, or not at all)."""
        if not self.pending:
            return

        def keep(header: dict, arrays: list) -> None:
            if self.pending:
                key, _, args = self.pending.pop(0)
                try:
                    self._store(key, args, True, header, arrays)
                except RuntimeError:
                    pass

        cancel_batch(self.worker, keep, timeout=300)
        self.pending = []

    def collect(self, key: str, args: dict, timeout: float = 300) -> np.ndarray:
        """``key``'s answer for ``args``: from the pending batch (answers before it are kept), or else
        the answer to the last request; the reference's answers go into the cache."""
        digest = cache_mod.args_digest(args)
        if self.is_pending(key, args):
            while self.pending:
                pkey, pdigest, pargs = self.pending.pop(0)
                output = self._store(pkey, pargs, True, *self._receive(pkey, pargs, timeout))
                if (pkey, pdigest) == (key, digest):
                    return output
        return self._store(key, args, self.direct_jit, *self._receive(key, args, timeout))

    def _receive(self, key: str, args: dict, timeout: float):
        try:
            header, arrays = self.worker.receive(timeout=timeout)
        except WorkerFailure as failure:
            self.pending = []
            raise RuntimeError(f"the {key} solution failed on {call_text(self.problem, args)}: "
                               f"{failure.message}") from None
        return header, arrays

    def _store(self, key: str, args: dict, jit: bool, header: dict, arrays: list) -> np.ndarray:
        if not header.get("ok") or header["result"].get("type") != "array" or arrays[0] is None:
            raise RuntimeError(f"the {key} solution failed on {call_text(self.problem, args)}: "
                               f"{header.get('error') or header.get('result')}")
        output = arrays[0].reshape(-1)
        if (key, jit) in self.caches:
            self.caches[key, jit].put(args, output)
        return output

    def outputs(self, key: str, cases: list[dict]) -> list[np.ndarray | None]:
        """``key``'s flat outputs on ``cases``, cached or in one batch (None where it fails on a case)."""
        outputs = [self.cached(key, args) for args in cases]
        missing = [args for args, out in zip(cases, outputs) if out is None]
        if missing:
            self.request_batch(key, missing)
        for i, args in enumerate(cases):
            if outputs[i] is None:
                try:
                    outputs[i] = self.collect(key, args)
                except RuntimeError:
                    pass
        return outputs

    def cached(self, key: str, args: dict, jit: bool = True) -> np.ndarray | None:
        cache = self.caches.get((key, jit))
        return None if cache is None else cache.get(args)

    def output(self, key: str, args: dict) -> np.ndarray:
        cached = self.cached(key, args)
        if cached is not None:
            return cached
        self.request(key, args)
        return self.collect(key, args)

    def accept_also(self, args: dict, expected: np.ndarray) -> np.ndarray | None:
        hook = getattr(self.hooks, "accept_also", None)
        return None if hook is None else hook(args, expected)

    def close(self) -> None:
        self.cancel_pending()
        if self.worker is not None:
            self.worker.close()
            self.worker = None
            self.modules.clear()
        for cache in self.caches.values():
            cache.save()


def cancel_batch(worker: Worker, keep, timeout: float) -> None:
    """Ask ``worker`` to stop its batch; answers already on their way go to ``keep(header, arrays)``."""
    worker.request({"op": "cancel"})
    while True:
        try:
            header, arrays = worker.receive(timeout)
        except WorkerFailure:
            return
        if header.get("op") == "cancelled":
            return
        keep(header, arrays)


def batch_message(problem: Problem, key: str, cases: list[dict], jit: bool) -> tuple[dict, list[np.ndarray]]:
    arrays: list[np.ndarray] = []
    calls = [{"args": encode_call(problem, args, arrays)[0]} for args in cases]
    return {"op": "batch", "key": key, "calls": calls, "jit": jit}, arrays


def load_message(problem: Problem, key: str, path: Path, source: str, memory_mib: int = 0) -> dict:
    return {"op": "load", "key": key, "path": str(path), "entry": problem.slug, "source": source,
            "arg_names": list(problem.args), "memory_mib": memory_mib}


@dataclass
class Fetch:
    """The learner's answers to one batch, on their way from one worker, in order."""

    worker: Worker
    pending: list[str]  # digests of the answers not yet received
    received: int = 0


def split_by_signature(problem: Problem, cases: list[tuple[str, dict]]) -> list[list[tuple[str, dict]]]:
    """``cases`` (digest, args) in two parts with no jit signature (integer arguments and array shapes)
    in common, since each signature is one more program to trace and compile: signatures go to
    alternate parts in the order they first appear, and each part keeps the cases' order."""
    signatures: dict[tuple, int] = {}
    parts: tuple[list, list] = ([], [])
    for digest, args in cases:
        signature = tuple(getattr(args[name], "shape", None) if kind.startswith("array:") else args[name]
                          for name, kind in problem.args.items() if kind != "float")
        parts[signatures.setdefault(signature, len(signatures)) % 2].append((digest, args))
    return [part for part in parts if part]


class Session:
    """One grading run: the learner's worker (or a trusted module in the shared worker) and the reference.

    When the reference has nothing to compute (its outputs are all cached, as on a re-grade), the core
    it would use runs a second worker with the learner's code, which answers part of the batch.
    """

    def __init__(self, problem: Problem, learner_path: Path, options: Options, trusted: Trusted | None = None,
                 subject_key: str | None = None, launch: Launch | None = None):
        self.problem = problem
        self.options = options
        self.learner_path = learner_path.resolve()
        self.call_seconds = options.call_seconds or problem.call_seconds
        self.memory_mib = options.memory_mib or problem.memory_mib
        self.started = time.monotonic()
        self.deadline = self.started + (options.problem_seconds or problem.problem_seconds)
        self.owns_trusted = trusted is None
        self.trusted = trusted or Trusted(problem, options.use_cache)  # read before learner code starts
        self.launch = None
        if subject_key is None:
            self.launch = launch or Launch.prepare(problem.reference, self.trusted.cache_folder)
            if self.owns_trusted:
                self.trusted.zygote = self.launch.own
        self.memo: dict[str, tuple | WorkerFailure] = {}  # the learner's answers fetched ahead, by input digest
        self.fetches: list[Fetch] = []
        self.helper: Worker | None = None  # the learner's second worker, if any
        if subject_key is None:  # learner code: a worker of its own
            self.key = "learner"
            self.learner_source = learner_path.read_text(errors="replace")
            self._start_learner()
            if self.owns_trusted and any(self.trusted.cache.get(ex.args) is None for ex in problem.examples):
                self.trusted.start()  # the reference is needed: both workers start at once
        else:  # a trusted module (variant, alternative) graded inside the trusted worker
            self.key = subject_key
            self.learner = self.trusted.start({subject_key: self.learner_path})
            self.learner_loaded = True
        self.cases = 0
        self.jit_error: str | None = None
        self.seen: list[tuple[dict, np.ndarray]] = []  # (inputs, learner's flat output), for naming pitfalls

    # -- workers ---------------------------------------------------------------------------------------

    def _start_learner(self) -> None:
        self.learner = Worker(compile_cache=learner_compile_cache(self.trusted.cache_folder),
                              zygote=self.launch.found or self.launch.own, started=self.launch.take_learner())
        self.learner.request(load_message(self.problem, self.key, self.learner_path, self.learner_source,
                                          self.memory_mib))
        self.learner_loaded = False

    def prefetch(self, cases: list[dict]) -> None:
        """Ask for the learner's and the reference's outputs on ``cases`` in one batch each, both workers
        running at once (or, with the reference's outputs all cached, for the learner's in two batches,
        in two workers). ``evaluate`` takes the learner's answers as it needs them; whatever is still
        pending when grading stops early or moves on (to shrinking) is cancelled."""
        unique = list({cache_mod.args_digest(a): a for a in cases}.items())
        if not unique:
            return
        misses = [a for _, a in unique if self.trusted.cache.get(a) is None]
        if misses:  # the reference starts first: it does not wait for the learner's import
            self.trusted.request_batch("reference", misses)
        if self.learner is self.trusted.worker:
            # A trusted module graded in the trusted worker (`grade check`): one worker, one batch at a
            # time. Its own calls go one by one, and stop at its first failure.
            for args in misses:
                self.trusted.collect("reference", args)
            return
        self._learner_ready()
        parts = [unique]
        zygote = self.launch.found or self.launch.own
        if not misses and zygote is not None:  # the reference's core is free
            parts = split_by_signature(self.problem, unique)
        for i, part in enumerate(parts):
            if i:
                self.helper = Worker(compile_cache=learner_compile_cache(self.trusted.cache_folder), zygote=zygote)
                self.helper.request(load_message(self.problem, self.key, self.learner_path, self.learner_source,
                                                 self.memory_mib), acknowledge="loading your file")
            worker = self.helper if i else self.learner
            worker.request(*batch_message(self.problem, self.key, [a for _, a in part], self.options.jit))
            self.fetches.append(Fetch(worker, [digest for digest, _ in part]))

    def _fetch_of(self, digest: str) -> Fetch | None:
        return next((fetch for fetch in self.fetches if digest in fetch.pending), None)

    def _take_pending(self, fetch: Fetch, until: str) -> None:
        """Receive ``fetch``'s answers into ``memo``, up to the one for digest ``until``."""
        while fetch.pending:
            digest = fetch.pending.pop(0)
            # The first case runs alone; the second answer may wait for the rest traced together.
            limit = self.call_seconds * (max(1.0, len(fetch.pending) / 4) if fetch.received == 1 else 1.0)
            fetch.received += 1
            try:
                self.memo[digest] = fetch.worker.receive(min(limit, max(self.remaining(), 0.1)))
            except (WorkerFailure, NotAcknowledged) as failure:
                if isinstance(failure, NotAcknowledged):
                    pass  # loaded in the first worker but not in the second: its cases go to the first
                elif fetch.received == 1:  # that case alone: the verdict is known
                    self.memo[digest] = failure
                elif fetch.worker is self.learner:  # somewhere in the batch: start afresh, one case at a time
                    self.learner.kill()
                    self._start_learner()
                    self._learner_ready()
                if fetch.worker is self.helper:
                    self.helper.kill()
                self.fetches.remove(fetch)
                return
            if digest == until:
                return

    def cancel_pending(self) -> None:
        """Stop the rest of the batches; answers already on their way are kept."""
        for fetch in self.fetches:
            if not fetch.pending:
                continue

            def keep(header: dict, arrays: list, fetch: Fetch = fetch) -> None:
                if fetch.pending:
                    self.memo[fetch.pending.pop(0)] = (header, arrays)

            try:
                cancel_batch(fetch.worker, keep, timeout=max(self.call_seconds, 1.0))
            except NotAcknowledged:  # the second worker never loaded the file: nothing of it to keep
                fetch.worker.kill()
        self.fetches = []

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def _timeout(self) -> float:
        remaining = self.remaining()
        if remaining <= 0:
            raise StopGrading(self._out_of_time())
        return min(self.call_seconds, remaining)

    def _out_of_time(self, args: dict | None = None) -> Outcome:
        limit = self.deadline - self.started
        return Outcome("time limit", args or {}, "timeout",
                       f"grading ran past the limit of {limit:.0f} s for the whole problem")

    def _learner_ready(self) -> None:
        if self.learner_loaded:
            return
        try:
            header, _ = self.learner.receive(self._timeout())
        except WorkerFailure as failure:
            raise StopGrading(self._failure_outcome("loading your file", {}, failure)) from None
        if not header.get("ok"):
            err = header["error"]
            status = "not_started" if err["kind"] == "not_implemented" else "error"
            raise StopGrading(Outcome("loading your file", {}, status, error_message(err), error=err))
        self.learner_loaded = True

    def _failure_outcome(self, name: str, args: dict, failure: WorkerFailure) -> Outcome:
        if failure.kind == "timeout":
            if self.remaining() <= 0:
                return self._out_of_time(args)
            return Outcome(name, args, "timeout", f"your function did not return within {self.call_seconds:.0f} s "
                                                  f"(the limit for one call); is there an endless loop?")
        if failure.kind == "memory":
            return Outcome(name, args, "error", f"your code exceeded the memory limit of {self.memory_mib} MiB "
                                                f"({failure.message})")
        return Outcome(name, args, "error", f"the process running your code stopped: {failure.message}")

    # -- one case --------------------------------------------------------------------------------------

    def evaluate(self, name: str, args: dict) -> Outcome:
        """Run the learner's entry on ``args``, compare with the reference, and say how it went."""
        self._learner_ready()
        expected = self.trusted.cache.get(args)
        digest = cache_mod.args_digest(args)
        fetch = self._fetch_of(digest)
        if fetch is not None:
            self._take_pending(fetch, until=digest)
        answer = self.memo.get(digest)
        if isinstance(answer, WorkerFailure):
            raise StopGrading(self._failure_outcome(name, args, answer))
        if answer is None:  # a case outside the batches (shrinking), or one a failed batch left unanswered
            self.cancel_pending()  # the worker must be free
            entries, arrays = encode_call(self.problem, args)
            self.learner.request({"op": "call", "key": self.key, "args": entries, "jit": self.options.jit}, arrays)
        shared = self.learner is self.trusted.worker
        in_batch = expected is None and self.trusted.is_pending("reference", args)
        if expected is None and not in_batch and not shared:  # computed while the learner's call runs
            self.trusted.request("reference", args)
        try:
            header, got = answer or self.learner.receive(self._timeout())
        except WorkerFailure as failure:
            raise StopGrading(self._failure_outcome(name, args, failure)) from None
        if expected is None:
            if shared and not in_batch:
                expected = self.trusted.output("reference", args)
            else:
                expected = self.trusted.collect("reference", args)
        self.cases += 1
        if not header.get("ok"):
            err = header["error"]
            status = "not_started" if err["kind"] == "not_implemented" and self.cases == 1 else "error"
            outcome = Outcome(name, args, status, error_message(err), error=err)
            if status == "not_started" or err["kind"] in ("memory", "exit", "signature"):
                raise StopGrading(outcome)
            return outcome
        if header.get("jit", {}).get("error") and self.jit_error is None:
            self.jit_error = header["jit"]["error"]
        specs = header.get("arrays") or [None]
        comparison = compare(
            expected_flat=expected, natural_shape=self.problem.natural_shape(args), dtype=self.problem.output_dtype,
            result=header["result"], spec=specs[0], actual=got[0] if got else None, exact=self.problem.exact,
            rtol=self.problem.rtol, atol=self.problem.atol, accept_also=self.trusted.accept_also(args, expected))
        if answer is not None and header.get("together") and not comparison.ok:
            # Answers traced together may round differently from a call on its own: a failure is
            # confirmed (and reported, and matched against known mistakes) on its own.
            del self.memo[digest]
            self.cases -= 1
            return self.evaluate(name, args)
        actual = got[0].reshape(-1) if got and got[0] is not None else None
        if actual is not None and comparison.stage in ("finite", "values") and len(self.seen) < KEEP_SEEN:
            self.seen.append((args, actual))
        status = "pass" if comparison.ok else "fail"
        return Outcome(name, args, status, comparison.message, comparison=comparison, actual=actual)

    def close(self) -> str:
        """End the learner's worker (not a shared one); the learner's printed output."""
        if self.learner is self.trusted.worker:
            printed = ""
        else:
            self.learner.close()
            printed = self.learner.output.text()
            if self.helper is not None:
                self.helper.close()
                second = self.helper.output.text()
                if second.strip():
                    printed += f"\n[printed by a second process, which ran your file on some of the inputs]\n{second}"
        if self.owns_trusted:
            self.trusted.close()
        if self.launch is not None:
            self.launch.close()
        return printed


def error_message(err: dict) -> str:
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


def call_text(problem: Problem, args: dict) -> str:
    shown = []
    for name in problem.args:
        value = args.get(name)
        if isinstance(value, np.ndarray):
            shown.append(f"{name}=<{value.dtype.name} array of shape {value.shape}>")
        else:
            shown.append(f"{name}={value!r}")
    return f"{problem.slug}({', '.join(shown)})"


def run_generated(session: Session, failures: list[Outcome], collect: list | None = None) -> Outcome | None:
    """Hypothesis phase: derandomised generation, then shrinking of the first failure found.

    With ``collect`` (a list), only gathers the inputs Hypothesis generates, evaluating nothing; the same
    inputs come again, in the same order, when it runs for real (derandomised), up to the first failure.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis.errors import Flaky

    problem = session.problem
    first_failure: list[float] = []

    @settings(max_examples=problem.max_examples, derandomize=True, database=None, deadline=None,
              phases=(Phase.generate, Phase.shrink), report_multiple_bugs=False, print_blob=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(problem.strategy())
    def generated(args):
        if first_failure and time.monotonic() - first_failure[0] > SHRINK_SECONDS:
            raise StopGrading(failures[-1])  # the smallest failure found in the time allowed
        if collect is not None:
            collect.append(problem.check_args(args))
            return
        outcome = session.evaluate("generated", problem.check_args(args))
        if outcome.status != "pass":
            first_failure[:] = first_failure or [time.monotonic()]
            failures.append(outcome)
            del failures[:-KEEP_FAILURES]
            raise CaseFailed(outcome)

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            generated()
    except CaseFailed as exc:
        return exc.outcome
    except Flaky:
        return failures[-1] if failures else None
    except BaseException as exc:  # Hypothesis may wrap ours; find it
        inner = _find(exc, (StopGrading, CaseFailed))
        if inner is None:
            raise
        if isinstance(inner, StopGrading):
            raise inner from None
        return inner.outcome
    return None


def drawn_inputs(session: Session) -> list[dict]:
    """The inputs Hypothesis draws for the problem, the same every run (derandomised). They are kept on
    disk: a run where every case passes then never imports Hypothesis."""
    problem = session.problem
    path = cache_mod.inputs_file(session.trusted.cache_folder, problem.slug,
                                 [problem.folder / "strategies.py", problem.folder / "problem.toml", Path(__file__)],
                                 problem.max_examples)
    kept = cache_mod.load_inputs(path, problem.args) if path is not None else None
    if kept is not None:
        return [problem.check_args(args) for args in kept]
    drawn: list[dict] = []
    run_generated(session, [], collect=drawn)
    if path is not None:
        cache_mod.save_inputs(path, drawn)
    return drawn


def _find(exc: BaseException, types) -> BaseException | None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, types):
            return exc
        for inner in getattr(exc, "exceptions", ()):
            found = _find(inner, types)
            if found is not None:
                return found
        exc = exc.__cause__ or exc.__context__
    return None


def grade(problem: Problem, learner_path: Path, options: Options | None = None,
          cases: list[tuple[str, dict]] | None = None, extra=None, trusted: Trusted | None = None,
          subject_key: str | None = None, fixed: bool = True, launch: Launch | None = None) -> Verdict:
    """Grade ``learner_path``. ``cases`` replaces the fixed examples and skips generation (replays).

    ``extra(session, verdict)``, when given, runs before the workers close (pitfall naming and the like).
    ``trusted`` shares a reference worker between gradings; ``subject_key`` grades a trusted module
    inside that worker instead of starting a worker of its own. ``launch`` says where the workers come
    from (prepared early by the command line; see :mod:`grader.launch`). ``fixed=False`` skips the fixed examples
    (``grade check`` uses it to show that the generated inputs alone catch a mistake).
    """
    options = options or Options()
    started = time.monotonic()
    session = Session(problem, learner_path, options, trusted, subject_key, launch)
    verdict = Verdict(problem.slug, "pass", "")
    failures: list[Outcome] = []
    try:
        try:
            if cases is None:
                cases_run = [(ex.name, ex.args) for ex in problem.examples] if fixed else []
            else:
                cases_run = cases
            bad = None
            ahead = [args for _, args in cases_run]
            if cases is None:
                ahead += drawn_inputs(session)
            session.prefetch(ahead)
            for name, args in cases_run:
                outcome = session.evaluate(name, args)
                verdict.checks.append({"name": name, "status": outcome.status, "message": outcome.message})
                if outcome.status != "pass":
                    bad = outcome
                    failures.append(outcome)
                    break
            if bad is None and cases is None:
                # Hypothesis's inputs are known already: only if one fails does Hypothesis run again,
                # drawing the same inputs (derandomised) up to that one, to shrink it.
                cases_before, seen_before = session.cases, len(session.seen)
                if any(session.evaluate("generated", args).status != "pass" for args in ahead[len(cases_run):]):
                    session.cases = cases_before
                    del session.seen[seen_before:]
                    bad = run_generated(session, failures)
                count = session.cases - len(cases_run)
                verdict.checks.append({"name": "generated inputs", "status": bad.status if bad else "pass",
                                       "message": bad.message if bad else f"{count} generated inputs match"})
        except StopGrading as stop:
            bad = stop.outcome
            verdict.checks.append({"name": bad.name, "status": bad.status, "message": bad.message})
        if bad is not None:
            verdict.status, verdict.message, verdict.counterexample = bad.status, bad.message, bad
        else:
            verdict.message = f"all {session.cases} cases match the reference"
        if session.jit_error:
            verdict.checks.append({"name": "jit", "status": "warn",
                                   "message": "your function did not run under jax.jit with its integer arguments "
                                              f"static, so it was graded eagerly ({session.jit_error})"})
        elif session.seen and options.jit:
            verdict.checks.append({"name": "jit", "status": "pass",
                                   "message": "runs under jax.jit with its integer arguments static"})
        session.cancel_pending()
        if extra is not None:
            extra(session, verdict)
    finally:
        verdict.examples_run = session.cases
        verdict.output = session.close()
        verdict.duration_s = round(time.monotonic() - started, 3)
    return verdict


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
