"""One grading run's cases: each asked of the graded module and of the reference, compared, counted, and kept
for naming a mistake (:class:`Session`), and the options a run is given (:class:`Options`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from grader.core.compare import compare
from grader.core.verdict import Isolation, Outcome, Status
from grader.grading.param_checks import ParameterChecks
from grader.grading.shared import SharedWorker
from grader.grading.requests import reply_bound
from grader.grading.trusted import Trusted
from grader.grading.workers import Clock, LearnerWorkers, StopGrading, error_message
from grader.problem.problems import Problem
from grader.problem.checkout import cache_folder, hidden_from_learners, learner_view
from grader.sandbox.operations import check_bound
from grader.sandbox.pool import WorkerFailure
from grader.sandbox.protocol import ProtocolError
from grader.sandbox.zygote import Launch

KEEP_SEEN = 64  # learner outputs kept for telling pitfalls apart


@dataclass
class Options:
    jit: bool = True
    use_cache: bool = True
    call_seconds: float | None = None
    problem_seconds: float | None = None
    memory_mib: int | None = None
    secret_seed: int | None = None  # inputs drawn from it too, for the instructor's verdicts (grader.problem.problems)


@dataclass(frozen=True)
class Tally:
    """How many cases a run has counted and how many outputs it keeps (:meth:`Session.tally`)."""

    cases: int
    seen: int


class Session:
    """One grading run's cases: each asked of the graded module and of the reference, compared, counted,
    and kept for naming a mistake. The graded side is ``workers``: the learner's (:class:`LearnerWorkers`,
    which schedules which worker answers), or, with ``subject_key``, a trusted module's in the trusted worker
    (:class:`SharedWorker`, `grade check`'s mode). The reference's side is ``trusted`` (:class:`Trusted`, or
    a handout's recorded answers). The parameters are checked by ``parameters`` (:class:`ParameterChecks`).

    Everything the grader trusts is read when the session is made; learner code starts with ``load``."""

    def __init__(self, problem: Problem, learner_path: Path, options: Options, trusted: Trusted | None = None,
                 subject_key: str | None = None, launch: Launch | None = None):
        self.problem = problem
        self.options = options
        learner_path = learner_path.resolve()
        self.clock = Clock.starting(options.problem_seconds or problem.problem_seconds)
        self.owns_trusted = trusted is None
        self.launch = None
        self.isolation = Isolation.NAMESPACES  # a trusted module needs none, and is graded like confined code
        if subject_key is None:
            folder = cache_folder(problem.root) if options.use_cache else None
            self.launch = launch or Launch.prepare(problem.reference, folder,
                                                   learner_view(problem.root, problem.slug, learner_path),
                                                   hidden_from_learners(problem.root), learner_path)
            self.isolation = self.launch.isolation()
        if trusted is None and problem.handout:
            from grader.grading.recorded import Recorded

            trusted = Recorded(problem)
        elif trusted is None:
            # Unconfined learner code could reach anything of this user's: then nothing kept between runs
            # is trusted, and the reference runs in a process of its own, not forked beside the learner's.
            confined = self.isolation == Isolation.NAMESPACES
            trusted = Trusted(problem, options.use_cache and confined,
                              self.launch.own if self.launch and confined else None)
        self.trusted = trusted
        trusted.limit(self.clock.deadline)
        self.key = subject_key or "learner"
        limits = dict(jit=options.jit, call_seconds=options.call_seconds or problem.call_seconds,
                      memory_mib=options.memory_mib or problem.memory_mib)
        if subject_key is None:
            self.workers = LearnerWorkers(problem, self.key, learner_path, trusted, self.clock, **limits,
                                          launch=self.launch)
        else:
            self.workers = SharedWorker(problem, self.key, learner_path, trusted, self.clock, **limits)
        self.cases = 0
        self.jit_error: str | None = None
        self.seen: list[tuple[dict, np.ndarray]] = []  # (inputs, learner's flat output), for naming pitfalls
        self.drawn: list[dict] = []  # the inputs Hypothesis draws for this problem
        self.parameters = ParameterChecks(problem, trusted, self.workers, self.clock, self.answers)

    @property
    def shared(self) -> bool:
        """Whether the graded module runs in the trusted worker (`grade check`'s variants)."""
        return self.workers.shared

    def load(self) -> None:
        """Learner code starts here: after everything trusted has been read."""
        self.workers.load()

    def tally(self) -> Tally:
        return Tally(self.cases, len(self.seen))

    def rewind(self, to: Tally) -> None:
        """Forget the cases counted and the outputs kept since ``to``: Hypothesis runs them again to shrink."""
        self.cases = to.cases
        del self.seen[to.seen:]

    def count_at_least(self, cases: int) -> None:
        """Count ``cases`` at least (the drawn inputs a failure that did not come again was found among)."""
        self.cases = max(self.cases, cases)

    def prefetch(self, cases: list[dict], reference: bool = True) -> None:
        """Ask for the learner's and (where ``reference``) the reference's outputs on ``cases`` in one batch
        each, both workers running at once. When the reference has nothing to compute (its outputs are all
        cached, as on a re-grade), its core runs a second learner worker instead, on the traced signatures
        the first does not get. ``evaluate`` takes the learner's answers as it needs them; whatever is still
        pending when grading stops early or moves on (to shrinking) is cancelled."""
        unique = list({self.trusted.digest(a): a for a in cases}.items())
        if not unique:
            return
        misses = [a for _, a in unique if self.trusted.cached("reference", a) is None]
        if misses and reference:  # the reference starts first: it does not wait for the learner's import
            self.trusted.request_batch("reference", misses)
        self.workers.ask_batch(unique, split=not misses)

    def cancel_pending(self) -> None:
        """Stop the rest of the learner's batches; answers already on their way are kept."""
        self.workers.cancel()

    # -- one case --------------------------------------------------------------------------------------

    def evaluate(self, name: str, args: dict) -> Outcome:
        """Run the learner's entry on ``args``, compare with the reference, and say how it went."""
        self.workers.ready()
        expected = self.trusted.cached("reference", args)
        answer = self.workers.take(self.trusted.digest(args))
        if isinstance(answer, WorkerFailure):
            raise StopGrading(self.workers.failure_outcome(name, args, answer))
        if answer is None:  # a case outside the batch (shrinking), or one a failed batch left unanswered
            self.workers.cancel()  # every batch: the cores are the shrinking's now
            self.workers.call(args)
        take_expected = partial(self.trusted.collect, "reference", args)  # from the batch, if it is in one
        if expected is None and not self.trusted.is_pending("reference", args):
            take_expected = self.workers.ask_reference(args)
        try:
            reply = answer or self.workers.receive(reply_bound(self.problem, [args]), "call")
        except WorkerFailure as failure:
            raise StopGrading(self.workers.failure_outcome(name, args, failure)) from None
        if expected is None:
            expected = take_expected()
        try:  # (after the reference's answer is taken: none is left on its way for a later request to take)
            check_bound(reply, reply_bound(self.problem, [args]))  # a batch's, or kept when one was cancelled
        except ProtocolError as exc:
            raise StopGrading(self.workers.failure_outcome(name, args, self.workers.malformed(str(exc)))) from None
        self.cases += 1
        if not reply.ok:
            return self._raised(name, args, reply.error)
        if reply.jit_error and self.jit_error is None:
            self.jit_error = reply.jit_error
        result = reply.result
        spec = {"dtype": result.dtype, "shape": list(result.shape)} if result.shape is not None else None
        comparison = compare(
            expected_flat=expected, natural_shape=self.problem.natural_shape(args), dtype=self.problem.output_dtype,
            result={"type": result.type, "dtype": result.dtype}, spec=spec, actual=result.array,
            exact=self.problem.exact, rtol=self.problem.rtol, atol=self.problem.atol,
            accept_also=self.trusted.accept_also(args, expected))
        if answer is not None and reply.together and not comparison.ok:
            # Answers traced together may round differently from a call on its own: a failure is
            # confirmed (and reported, and matched against known mistakes) on its own.
            self.cases -= 1
            return self.evaluate(name, args)
        actual = result.array  # as it came back: the report shows a wrong shape as it is
        if actual is not None and comparison.stage in ("finite", "values") and len(self.seen) < KEEP_SEEN:
            self.seen.append((args, actual.reshape(-1)))
        status = Status.PASS if comparison.ok else Status.FAIL
        return Outcome(name, args, status, comparison.message, comparison=comparison, actual=actual)

    def _raised(self, name: str, args: dict, err: dict) -> Outcome:
        """The outcome of a case on which the learner's code raised ``err``; one that ends the run is raised."""
        status = Status.NOT_STARTED if err["kind"] == "not_implemented" and self.cases == 1 else Status.ERROR
        outcome = Outcome(name, args, status, error_message(err), error=err)
        if status == Status.NOT_STARTED or err["kind"] in ("memory", "exit", "signature"):
            raise StopGrading(outcome)
        return outcome

    # -- for diagnosis -----------------------------------------------------------------------------------

    def answers(self, cases: list[dict]) -> list[np.ndarray | None]:
        """The graded module's flat outputs on ``cases`` (None where no array came back), for telling
        mistakes apart: nothing is compared or counted. Outputs seen earlier in the run, or kept from a
        batch that was cancelled, are reused; the others come in one batch, split between two workers as
        :meth:`prefetch` splits a grade's. If a worker fails or the run's time is up, the rest stay None."""
        digest = self.trusted.digest
        known = {digest(args): actual for args, actual in self.seen}
        for d in {digest(args) for args in cases} - set(known):
            if (kept := self.workers.kept_array(d)) is not None:
                known[d] = kept
        missing = list({d: a for a in cases if (d := digest(a)) not in known}.items())
        if missing:
            known.update(self.workers.outputs(missing))
        return [known.get(digest(args)) for args in cases]

    # -- the parameters, for :func:`grader.grading.param_checks.check_parameters` and diagnosis ----------------

    def params_diff(self, args: dict) -> list[str] | None:
        return self.parameters.diff(args)

    def tree_contradiction(self, args: dict) -> str | None:
        return self.parameters.contradiction(args)

    @property
    def tree_unseen(self) -> bool:
        return self.parameters.tree_unseen

    @tree_unseen.setter
    def tree_unseen(self, unseen: bool) -> None:
        self.parameters.tree_unseen = unseen

    def ask_param_values(self, args: dict) -> None:
        self.parameters.ask_values(args)

    def param_values(self) -> tuple[dict, dict] | None:
        return self.parameters.values()

    def close(self) -> str:
        """End the learner's workers (not a shared one) and the run's hold on the reference's side; the
        learner's printed output."""
        printed = self.workers.close()
        if self.owns_trusted:
            self.trusted.close()
        else:  # shared: the run's time limit ends with the run
            self.trusted.limit(None)
        if self.launch is not None:
            self.launch.close()
        return printed
