"""The trusted side of a run: the reference (and the known-wrong and correct variants) in a worker of
their own, and the outputs kept on disk.

Everything here is read before learner code starts: the reference's source, the grading hooks, the
cached outputs, the statement's expected outputs and ``golden.json``. Every reference output, cached or
fresh, that the statement or the golden file also gives is checked against them: a cached one that
disagrees is dropped and computed again, a fresh one that disagrees is a broken problem
(:class:`ReferenceError`), never a verdict on the learner.

:class:`Trusted` is what a run asks; each of its jobs is an object of its own: the modules' sources
(:mod:`~grader.grading.sources`), what the statement and golden.json say (:mod:`~grader.grading.known`), the
outputs kept (:mod:`~grader.grading.kept`), the worker and its answers on their way
(:mod:`~grader.grading.trusted_worker`), and the reference's module calls and parameters
(:mod:`~grader.grading.probes`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grader.grading import cache as cache_mod
from grader.grading.errors import ReferenceError, TrustedFailure
from grader.grading.kept import KeptOutputs
from grader.grading.known import Known
from grader.grading.probes import CapturedCalls, ParameterValues
from grader.grading.sources import TrustedSources
from grader.grading.trusted_worker import TrustedWorker
from grader.problem.problems import Problem
from grader.problem.checkout import cache_folder


SHARE_FROM = 4  # modules to run on one input from which a second worker takes half of them


class Trusted:
    """The reference's worker, started on first need, and the outputs kept between runs.

    ``zygote`` forks the worker when given (see :class:`TrustedWorker`); ``golden_pitfalls``: take the known
    mistakes' outputs that golden.json keeps (`grade check`, which checks them, computes its own)."""

    recorded = False  # see grader.grading.recorded.Recorded: the answers of a handout, recorded from this

    def __init__(self, problem: Problem, use_cache: bool = True, zygote=None, golden_pitfalls: bool = True):
        self.problem = problem
        self.hooks = problem.hooks()
        self.cache_folder = cache_folder(problem.root) if use_cache else None
        self.sources = TrustedSources(problem, self.hooks)
        self.known = Known(problem, self.hooks)
        self.kept = KeptOutputs(problem, self.cache_folder, self.sources, self.known, seed_golden=golden_pitfalls)
        self.trees = cache_mod.TreeCache(self.cache_folder, problem.slug, self.sources.depends_on())
        self.worker = TrustedWorker(problem, self.sources, self.cache_folder, zygote, self.kept.keep)
        self.twin: TrustedWorker | None = None  # a second worker for the same modules, started on first need
        self.calls = CapturedCalls(problem, self.cache_folder, self.sources, self.worker)
        self.values = ParameterValues(problem, self.cache_folder, self.sources, self.worker)

    @property
    def caches(self):
        """The outputs kept, by (key, jit)."""
        return self.kept.caches

    def limit(self, deadline: float | None) -> None:
        """No wait here, nor in the twin, goes past ``deadline`` (a run's own limit) until ``limit(None)``."""
        for worker in (self.worker, self.twin):
            if worker is not None:
                worker.deadline = deadline

    def digest(self, args: dict) -> str:
        return self.known.digest(args)

    def agrees(self, args: dict, expected: np.ndarray, got: np.ndarray) -> bool:
        """Whether ``got`` is an acceptable answer where ``expected`` is the reference's (both flat)."""
        return self.known.agrees(args, expected, got)

    def accept_also(self, args: dict, expected: np.ndarray) -> np.ndarray | None:
        return self.known.accept_also(args, expected)

    # -- the modules -------------------------------------------------------------------------------------

    def register(self, modules: dict[str, Path]) -> None:
        """Make ``modules`` (key -> path) known, with their caches; they are loaded when the worker starts
        for something (outputs that are all cached start no worker)."""
        for key, path in modules.items():
            self.sources.add(key, path)
            self.kept.register(key, path)

    def pitfalls(self) -> dict[str, tuple[str, str | None, str]]:
        """The known-wrong variants, registered: name -> (its MESSAGE, its DIAGNOSIS or None, its STAGE)."""
        from grader.problem.variant import notes

        variants = self.problem.variants("pitfalls")
        self.register({f"pitfall_{name}": path for name, path in variants.items()})
        return {name: notes(path) for name, path in variants.items()}

    def variant_source_key(self, key: str) -> str:
        return self.sources.variant_source_key(key)

    # -- the worker --------------------------------------------------------------------------------------

    def start(self, modules: dict[str, Path] | None = None):
        """The worker's process, with the reference, every registered module and ``modules`` (key -> path)
        loaded (see :meth:`TrustedWorker.start`)."""
        self.register(modules or {})
        return self.worker.start()

    def acknowledge(self) -> None:
        self.worker.acknowledge()

    def request(self, key: str, args: dict, jit: bool = True) -> None:
        self.worker.request(key, args, jit)

    def request_batch(self, key: str, cases: list[dict]) -> None:
        self.worker.request_batch(key, cases)

    def is_pending(self, key: str, args: dict) -> bool:
        return self.worker.is_pending(key, args)

    def cancel_pending(self) -> None:
        self.worker.cancel_pending()

    def collect(self, key: str, args: dict, timeout: float = 300) -> np.ndarray:
        return self.worker.collect(key, args, timeout)

    # -- outputs -----------------------------------------------------------------------------------------

    def cached(self, key: str, args: dict, jit: bool = True) -> np.ndarray | None:
        return self.kept.cached(key, args, jit)

    def output(self, key: str, args: dict) -> np.ndarray:
        cached = self.cached(key, args)
        if cached is not None:
            return cached
        self.request(key, args)
        return self.collect(key, args)

    def outputs(self, key: str, cases: list[dict]) -> list[np.ndarray | None]:
        """``key``'s flat outputs on ``cases``, cached or in one batch (None where a variant fails on a
        case; a failure of the reference, or of the worker, raises)."""
        outputs = [self.cached(key, args) for args in cases]
        missing = [args for args, out in zip(cases, outputs) if out is None]
        if missing and not all(self.is_pending(key, args) for args in missing):  # (else: prefetched)
            self.request_batch(key, missing)
        for i, args in enumerate(cases):
            if outputs[i] is None:
                outputs[i] = answer(self.worker, key, args)
        return outputs

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
        sides = [(self.worker, missing)]
        if share and len(missing) >= SHARE_FROM:
            if self.twin is None:  # the same sources and kept outputs; a process of its own
                self.twin = TrustedWorker(self.problem, self.sources, self.cache_folder, self.worker.zygote,
                                          self.kept.keep, self.worker.deadline)
            sides = [(self.worker, missing[::2]), (self.twin, missing[1::2])]
        for side, part in sides:
            for key in part:
                side.request(key, args, jit)
        for side, part in sides:
            for key in part:
                outputs[key] = answer(side, key, args)
        return outputs

    # -- beyond the outputs ------------------------------------------------------------------------------

    def capture(self, args: dict) -> tuple[list[dict], list[np.ndarray]]:
        """The reference's calls of the problem's parts on ``args`` (:meth:`CapturedCalls.capture`)."""
        return self.calls.capture(args)

    def param_values(self, args: dict) -> dict[str, np.ndarray] | None:
        """The reference's parameters' initial values at ``args``'s signature (:meth:`ParameterValues.initial`)."""
        return self.values.initial(args)

    def substituted(self, args: dict, values: dict[str, np.ndarray]) -> np.ndarray | None:
        """The reference's output on ``args`` with ``values`` in place (:meth:`ParameterValues.substituted`)."""
        return self.values.substituted(args, values)

    def close(self) -> None:
        """End the workers and write what is kept."""
        if self.twin is not None:
            self.twin.close()  # what it computed is in the caches it shares with the first
        self.twin = None
        self.worker.close()
        self.kept.save()
        self.trees.save()
        self.values.save()
        self.calls.save()


def answer(worker: TrustedWorker, key: str, args: dict) -> np.ndarray | None:
    """``key``'s answer to its request on ``args`` in ``worker``: None where a variant raised there; a failure
    of the reference, or of the worker (which says nothing of any module), raises."""
    try:
        return worker.collect(key, args)
    except ReferenceError as exc:
        if key == "reference" or isinstance(exc, TrustedFailure):
            raise
        return None
