"""`grade check`'s mode: the graded module is a trusted one (the reference, a known mistake, an alternative),
run in the trusted worker beside the reference rather than in a learner's worker of its own.

Everything the session does differently for it is here, as :class:`SharedWorker`'s answers to what the
session asks of a graded side (:class:`grader.grading.workers.GradedSide`): one worker, one request at a
time; nothing to confine, mark or kill (the trusted worker runs trusted modules only, and is left to its
owner, even after a malformed answer); the module's parameter tree is a trusted one, traced once per
signature; and a grade of it shows no more of a failing module than its failure and its name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from grader.core.verdict import Status
from grader.grading.requests import call_request
from grader.grading.workers import Clock, GradedSide
from grader.problem.problems import Problem
from grader.sandbox.pool import Worker


class SharedWorker(GradedSide):
    """The graded module ``key`` (at ``path``), loaded in ``trusted``'s worker with the reference: it has no
    worker of its own, answers each call as it is asked, and reports no parameter values of its own."""

    shared = True
    source = None  # no learner's code to say anything of (the kata's teaches note)
    trees_checked_on = (Status.PASS,)  # only where the tree could change the verdict
    loaded = True  # with the trusted worker

    def __init__(self, problem: Problem, key: str, path: Path, trusted, clock: Clock, *, jit: bool,
                 call_seconds: float, memory_mib: int):
        super().__init__(problem, key, path, trusted, clock, jit=jit, call_seconds=call_seconds,
                         memory_mib=memory_mib)
        self.trusted_keys = (key,)
        self.first = trusted.start({key: path})

    def load(self) -> None:
        """Loaded with the trusted worker."""

    def ready(self) -> None:
        """Loaded with the trusted worker."""

    def receive(self, max_bytes: int, expect: str, worker: Worker | None = None):
        self.trusted.acknowledge()  # the trusted worker's load replies come first
        return super().receive(max_bytes, expect, worker)

    def ask_batch(self, unique: list[tuple[str, dict]], split: bool) -> None:
        """No batch of the graded module's: its calls go one by one (and stop at its first failure), after the
        reference's batch on the same cases, which the one worker answers first."""
        for _, args in unique:
            if self.trusted.cached("reference", args) is None and self.trusted.is_pending("reference", args):
                self.trusted.collect("reference", args)

    def take(self, digest: str) -> None:
        """No answer is received ahead of its case."""
        return None

    def cancel(self, only: Worker | None = None) -> None:
        """No batch to stop."""

    def call(self, args: dict) -> None:
        self.first.request(*call_request(self.problem, self.key, args, self.jit))

    def ask_reference(self, args: dict) -> Callable[[], np.ndarray]:
        """The reference's output on ``args``, asked of the one worker once the graded module's call has
        answered (the function returned asks it)."""
        return partial(self.trusted.output, "reference", args)

    def outputs(self, missing: list[tuple[str, dict]]) -> dict[str, np.ndarray | None]:
        """The flat outputs on ``missing`` (digest, args) by digest, in one batch of the trusted worker, kept
        like any trusted module's (None where the module raised)."""
        return {d: out for (d, _), out in zip(missing, self.trusted.outputs(self.key, [a for _, a in missing]))}

    def kept_array(self, digest: str) -> None:
        return None

    def ask_values(self, args: dict) -> bool:
        """False: a trusted module's initial values are not asked (nor, then, the reference's)."""
        return False

    def take_values(self) -> None:
        return None

    def ask_tree(self, args: dict) -> None:
        """None: its tree is traced in the trusted worker with the reference's (see ``trusted_keys``)."""
        return None

    def mark_output(self) -> None:
        """Nothing of a learner's is printed here."""

    def close(self) -> str:
        """The trusted worker is left to its owner; nothing of a learner's was printed."""
        return ""
