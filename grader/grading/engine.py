"""The grading engine: fixed cases first, then the inputs Hypothesis draws, then shrinking a failure.

It only drives and records. Learner code runs in confined workers (:mod:`grader.sandbox.pool`) that
:mod:`grader.grading.workers` schedules, the reference in the trusted side's (:mod:`grader.grading.trusted`),
comparisons in :mod:`grader.core.compare`; what a failure means is for :mod:`grader.explain.diagnosis`, how
it reads for :mod:`grader.render.report`.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.grading import cache as cache_mod
from grader.core import kinds
from grader.core.compare import compare
from grader.sandbox.pool import WorkerFailure
from grader.sandbox.protocol import ProtocolError, check_bound
from grader.problem.problems import Problem, ProblemError, cache_folder, hidden_from_learners, learner_view
from grader.grading.trusted import ReferenceError, Trusted, TrustedTimeout, reply_bound
from grader.grading.workers import Clock, LearnerWorkers, StopGrading, error_message, flat_array
from grader.core.verdict import Check, Isolation, Outcome, Status, Verdict
from grader.problem import teaches
from grader.sandbox.zygote import Launch

SHRINK_SECONDS = 20.0  # time allowed for shrinking once a failure is found
KEEP_FAILURES = 8  # failing cases kept: the last is the smallest, reported if shrinking runs out of time
KEEP_SEEN = 64  # learner outputs kept for telling pitfalls apart
DRAW_SEED = 20261126  # the drawn inputs of every problem follow from it (and from its strategies)
DIFFERENT_ANSWER = ("; called again with the same input, your function answered differently: a correct "
                    "function gives the same answer every time (is there hidden state, or randomness "
                    "that does not come from the seed?)")
UNSEEN_PARAMETERS = ("your code creates no parameters the grader can see (it looks for those that linen's init "
                     "and NNX modules make), so neither the parameter tree nor the runs with the parameters moved "
                     "from their initial values could check them; create them as the stub does")

MOVED_NOTE = ", each run with every parameter moved from its initial value"
MALFORMED_TREE = ("the process running your code broke the grader's protocol: the parameter tree it reported "
                  "contradicts your outputs")


@dataclass
class Options:
    jit: bool = True
    use_cache: bool = True
    call_seconds: float | None = None
    problem_seconds: float | None = None
    memory_mib: int | None = None
    secret_seed: int | None = None  # inputs drawn from it too, for the instructor's verdicts (grader.problem.problems)


class CaseFailed(Exception):
    """A failing case; Hypothesis shrinks the input that raised it."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


@dataclass(frozen=True)
class Tally:
    """How many cases a run has counted and how many outputs it keeps (:meth:`Session.tally`)."""

    cases: int
    seen: int


class Session:
    """One grading run's cases: each asked of the graded module and of the reference, compared, counted,
    and kept for naming a mistake. Which worker answers is :class:`LearnerWorkers`' to schedule; the
    reference's side is ``trusted`` (:class:`Trusted`, or a handout's recorded answers).

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
            self.launch = launch or Launch.prepare(problem.reference, cache_folder(problem.root) if options.use_cache else None,
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
        self.workers = LearnerWorkers(problem, self.key, learner_path, trusted, self.clock, jit=options.jit,
                                      call_seconds=options.call_seconds or problem.call_seconds,
                                      memory_mib=options.memory_mib or problem.memory_mib, launch=self.launch)
        self.cases = 0
        self.jit_error: str | None = None
        self.seen: list[tuple[dict, np.ndarray]] = []  # (inputs, learner's flat output), for naming pitfalls
        self.drawn: list[dict] = []  # the inputs Hypothesis draws for this problem
        self.tree_unseen = False  # the reference creates parameters, and the graded module none that Flax makes
        # (the reference's tree, the graded module's as its worker reported it): what tree_contradiction checks
        self.tree_report: tuple[dict, dict | None] | None = None
        self.reference_values: dict | None = None  # the reference's initial parameters, while the learner's are due
        self.values_args: dict | None = None  # the input they were asked on

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
        if self.shared:
            # A trusted module graded in the trusted worker (`grade check`): one worker, one batch at a
            # time. Its own calls go one by one, and stop at its first failure.
            for args in misses:
                self.trusted.collect("reference", args)
            return
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
        in_batch = expected is None and self.trusted.is_pending("reference", args)
        if expected is None and not in_batch and not self.shared:  # computed while the learner's call runs
            self.trusted.request("reference", args)
        try:
            reply = answer or self.workers.receive(reply_bound(self.problem, [args]))
        except WorkerFailure as failure:
            raise StopGrading(self.workers.failure_outcome(name, args, failure)) from None
        if expected is None:
            if self.shared and not in_batch:
                expected = self.trusted.output("reference", args)
            else:
                expected = self.trusted.collect("reference", args)
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
        if missing and self.shared:
            for (d, _), out in zip(missing, self.trusted.outputs(self.key, [a for _, a in missing])):
                known[d] = out
        elif missing:
            self.workers.settle()
            # (Those a batch still brings, the second worker's from the grade, come from it.)
            self.prefetch([a for d, a in missing if not self.workers.answer_due(d)], reference=False)
            for d, _ in missing:
                try:
                    answer = self.workers.take(d)
                except StopGrading:  # the run's time is up: the rest stay None
                    break
                if (found := flat_array(answer)) is not None:
                    known[d] = found
            self.workers.cancel()
        return [known.get(digest(args)) for args in cases]

    def params_diff(self, args: dict) -> list[str] | None:
        """Missing, extra and misshaped parameters of the graded module's Flax tree on ``args``, by path
        (empty if the trees agree; None where there is no tree to compare: the problem builds none, the
        learner's is not a linen tree, or a worker failed). A trusted module's tree is traced once per
        signature (the shapes do not depend on the values).

        The graded module's tree is what its worker reports, where learner code runs and can say anything:
        the grader computes the differences, and :meth:`tree_contradiction` checks the report against the
        outputs before anything is said from it (see :func:`check_parameters`)."""
        arrays: list = []
        entries = kinds.encode(self.problem.args, args, arrays)
        signature = repr(kinds.signature(self.problem.args, kinds.with_moved(args, False)))  # moving changes no shape
        trees = self.trusted.trees
        traced = [key for key in dict.fromkeys(["reference"] + [self.key] * self.shared)
                  if (key, signature) not in trees]
        asked = []
        if traced:  # the reference's worker, started only for a tree not kept from an earlier run
            worker = self.trusted.start()
            for key in traced:
                worker.request({"op": "params", "key": key, "args": entries}, arrays)
                asked.append((worker, key))
        if not self.shared:
            self.workers.ask_tree(entries, arrays)
            asked.append((self.workers.first, self.key))
        self.trusted.acknowledge()
        actual, refused = None, False
        self.tree_report = None
        for worker, key in asked:
            try:
                reply = worker.receive(min(60.0, max(self.clock.remaining(), 1.0)), 0, "params")
            except WorkerFailure:
                return None
            if key in traced:
                trees[key, signature] = reply.params
            else:
                actual, refused = reply.params, not reply.ok
        expected = trees["reference", signature]
        if self.shared:
            actual = trees[self.key, signature]
        if refused:  # an error where a tree was due: no tree to compare, nor one known to be missing
            return None
        self.tree_unseen = bool(expected) and actual is None
        if expected:
            self.tree_report = (expected, actual)
        if not expected or actual is None:  # no tree that Flax makes on one side
            return None
        return tree_differences(expected, actual)

    def tree_contradiction(self, args: dict) -> str | None:
        """What the graded module's outputs show against the tree its worker reported (:meth:`params_diff`, on
        ``args``), or None where they show nothing against it (and for a trusted module's tree).

        A parameter moved (:mod:`grader.sandbox.moved`) changes the output of code that has it, by a move
        drawn from its path and shape; the outputs are compared here, in the grader. So a report that a
        parameter is missing (or that there are none) is contradicted where the graded module's output
        changes clearly when the grader moves it; a report that a parameter has another shape than the
        reference's, where the output with it moved is the reference's with it moved (and that differs from
        the reference's at the initial values). What no output shows (a parameter that nothing uses) is
        not checked: the verdict never comes from the report alone but where it tells against the code."""
        if self.shared or self.tree_report is None:
            return None
        expected, actual = self.tree_report
        plain = kinds.with_moved(args, False)
        absent: bool | list[str] = True if actual is None else sorted(set(expected) - set(actual))
        misshaped = [] if actual is None else sorted(p for p in set(expected) & set(actual)
                                                     if list(expected[p]) != list(actual[p]))
        if not absent and not misshaped:  # (what the report adds, extra parameters, no output can contradict)
            return None
        moves = lambda paths: True if paths is True else tuple(p.removeprefix("params/") for p in paths)  # noqa: E731
        cases = [plain] + [kinds.with_moved(plain, moves(paths)) for paths in (absent, misshaped) if paths]
        answers = self.answers(cases)
        if absent and answers[0] is not None and answers[1] is not None and clearly_differs(answers[0], answers[1]):
            if absent is True:
                return ("it reported that your code creates no parameters that Flax makes, yet your output changes "
                        "when the grader moves your parameters from their initial values")
            return (f"it reported no {listing_paths(absent)} in your parameter tree, yet your output changes when "
                    f"the grader moves {'it' if len(absent) == 1 else 'them'}")
        if misshaped and answers[-1] is not None:
            case = cases[-1]
            reference_plain, reference_moved = self.trusted.outputs("reference", [plain, case])
            if self.trusted.agrees(case, reference_moved, answers[-1]) \
                    and clearly_differs(reference_plain, reference_moved):
                return (f"it reported other shapes than the statement's for {listing_paths(misshaped)}, yet with "
                        f"{'it' if len(misshaped) == 1 else 'them'} moved your output is the reference's (a move "
                        f"depends on the parameter's shape)")
        return None

    def ask_param_values(self, args: dict) -> None:
        """Start the learner's worker finding the initial values of its parameters on ``args`` (it works on
        them while the trusted side runs the known mistakes); :meth:`param_values` takes the answer."""
        self.values_args = args
        self.workers.ask_values(args)
        if self.shared:
            return
        reference: dict = {}
        try:
            reference = self.trusted.param_values(args) or {}
        finally:
            self.reference_values = reference  # the learner's answer is due, whatever the reference's side did
            self.workers.bound_values(reference)

    def param_values(self) -> tuple[dict, dict] | None:
        """The initial values of the parameters the learner's code and the reference create (``{path: array}``
        each) on the input :meth:`ask_param_values` was given, or None where either creates none that Flax
        makes, or the worker failed. The reference's are kept on disk, like its outputs.

        The learner's are what its worker reports: where they differ from the reference's, they are given
        only where the outputs bear them out (:meth:`values_explain`), else None."""
        graded = self.workers.take_values()
        reference, self.reference_values = self.reference_values, None
        if not (graded and reference):
            return None
        return (graded, reference) if self.shared or self.values_explain(graded, reference) else None

    def values_explain(self, graded: dict, reference: dict) -> bool:
        """Whether the initial values the learner's worker reported (``graded``) are borne out by its output on
        the input they were asked on: the reference, run in the trusted worker with those values in place
        of its own, gives that output. Then they explain it, whatever else the worker says; values that do
        not give it (a report forged, or code that computes otherwise) explain nothing. Values that are the
        reference's at every common path need no such run: they name no parameter."""
        common = [p for p in sorted(graded) if p in reference and graded[p].shape == reference[p].shape]
        if all(np.allclose(graded[p], reference[p], rtol=1e-6, atol=0) for p in common):
            return True
        args = self.values_args
        try:
            mine = self.answers([args])[0]
            theirs = self.trusted.substituted(args, {p: graded[p] for p in common})
        except (ReferenceError, WorkerFailure, StopGrading):
            return False
        return mine is not None and theirs is not None and self.trusted.agrees(args, theirs, mine)

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


def clearly_differs(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two flat outputs of one program differ by more than rounding could make them (one traced
    alone, one with others; eagerly or under jax.jit): somewhere, by more than a thousandth of the largest
    magnitude in either (at least of 1), among the values finite in both. Outputs of other shapes are not
    said to differ: that says nothing of a parameter."""
    if a.shape != b.shape:
        return False
    try:
        a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    except (TypeError, ValueError):
        return False
    finite = np.isfinite(a64) & np.isfinite(b64)
    if not finite.any():
        return False
    a64, b64 = a64[finite], b64[finite]
    scale = max(float(np.abs(a64).max()), float(np.abs(b64).max()), 1.0)
    return float(np.abs(a64 - b64).max()) > 1e-3 * scale


def listing_paths(paths: list[str]) -> str:
    """Parameters by path, as the report names them (at most four, then how many more)."""
    named = ", ".join(f"`{p.removeprefix('params/')}`" for p in paths[:4])
    more = f" and {len(paths) - 4} more" if len(paths) > 4 else ""
    return f"parameter{'s' * (len(paths) > 1)} {named}{more}"


def tree_differences(expected: dict, actual: dict) -> list[str]:
    """Missing, extra and misshaped parameters of ``actual`` against ``expected`` (``{path: shape}`` each),
    under a sentence that introduces them; empty where the trees agree."""
    lines = []
    for path in sorted(set(expected) - set(actual)):
        lines.append(f"missing parameter {path} {tuple(expected[path])}")
    for path in sorted(set(actual) - set(expected)):
        lines.append(f"unexpected parameter {path} {tuple(actual[path])}")
    for path in sorted(set(expected) & set(actual)):
        if expected[path] != actual[path]:
            lines.append(f"parameter {path} has shape {tuple(actual[path])}, expected {tuple(expected[path])}")
    if lines:
        lines.insert(0, "Your parameter tree differs from the one the statement pins, so the outputs cannot "
                        "agree until it matches:")
    return lines


def run_generated(session: Session, failures: list[Outcome], collect: list | None = None,
                  draws: tuple[int, int] | None = None) -> Outcome | None:
    """Hypothesis phase: generation from one seed, then shrinking of the first failure found.

    With ``collect`` (a list), only gathers the inputs Hypothesis generates, evaluating nothing; the same
    inputs come again, in the same order, when it runs for real (one seed), up to the first failure.
    ``draws`` is (seed, how many): by default the problem's public inputs, :data:`DRAW_SEED` and its
    ``max_examples``.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
    from hypothesis.errors import Flaky

    problem = session.problem
    first_failure: list[float] = []
    strategy = problem.strategy()

    # One seed, not one derived from this function's source text (Hypothesis's derandomize): the same
    # inputs wherever the grader's sources are, or are not, readable (a checkout, a wheel, compiled files).
    chosen, count = draws or (DRAW_SEED, problem.max_examples)

    @seed(chosen)
    @settings(max_examples=count, database=None, deadline=None,
              phases=(Phase.generate, Phase.shrink), report_multiple_bugs=False, print_blob=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(strategy)
    def generated(args):
        if first_failure and time.monotonic() - first_failure[0] > SHRINK_SECONDS:
            raise StopGrading(failures[-1])  # the smallest failure found in the time allowed
        args = problem.drawn_case(args)
        if collect is not None:
            collect.append(args)
            return
        outcome = session.evaluate("generated", args)
        if outcome.status != Status.PASS:
            first_failure[:] = first_failure or [time.monotonic()]
            failures.append(outcome)
            del failures[:-KEEP_FAILURES]
            raise CaseFailed(outcome)

    try:
        with contextlib.redirect_stdout(io.StringIO()), without_local_constants():
            generated()
    except CaseFailed as exc:
        return exc.outcome
    except Flaky:  # failed, then passed when Hypothesis called it again with the same input
        if not failures:
            return None
        failures[-1].message += DIFFERENT_ANSWER
        return failures[-1]
    except BaseException as exc:  # Hypothesis may wrap ours; find it
        inner = _find(exc, (StopGrading, CaseFailed, ProblemError))
        if inner is None:
            if collect is not None:
                raise ProblemError(f"problems/{problem.slug}/strategies.py: drawing an input failed: "
                                   f"{type(exc).__name__}: {exc}") from None
            raise
        if isinstance(inner, (StopGrading, ProblemError)):
            raise inner from None
        return inner.outcome
    return None


@contextlib.contextmanager
def without_local_constants():
    """Hypothesis mixes into what it draws the literals it finds in the source of the "local" modules this
    process has imported (those not installed under site-packages): the grader's own, the problems'. The
    inputs would then depend on where the grader is installed (a checkout draws other inputs than a wheel)
    and on what else was imported. They are drawn without them (Hypothesis's own constants stay). Hypothesis
    is pinned: where a release moves what this replaces, drawing stops with an error, not other inputs."""
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    saved = providers._get_local_constants, providers.CONSTANTS_CACHE
    providers._get_local_constants = Constants  # called with no arguments: no constants at all
    providers.CONSTANTS_CACHE = type(saved[1])(1024)  # what was cached held the local ones
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = saved


def smallest_failing(session: Session, first: Outcome) -> Outcome:
    """A handout's stand-in for shrinking (which needs the reference on new inputs): the smallest input of
    the recorded pool, smaller than ``first``'s, on which the learner's code fails too; else ``first``."""
    from grader.grading.recorded import case_size

    session.cancel_pending()  # the learner's worker answers these next, one by one
    limit = case_size(first.args)
    for args in session.trusted.small_inputs:
        if case_size(args) >= limit:
            break
        outcome = session.evaluate("generated", args)
        if outcome.status != Status.PASS:
            return outcome
    return first


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


def kept_inputs(session: Session) -> tuple[Path | None, list[dict] | None]:
    """Where the drawn inputs are kept, and what is kept there (None if nothing usable). A handout
    carries the inputs its answers were recorded for."""
    if session.trusted.recorded:
        return None, session.trusted.drawn
    problem = session.problem
    path = cache_mod.inputs_file(session.trusted.cache_folder, problem.slug,
                                 [problem.folder / "strategies.py", problem.folder / "problem.toml"],
                                 problem.max_examples)
    kept = cache_mod.load_inputs(path, problem.args) if path is not None else None
    return path, None if kept is None else [problem.drawn_case(args) for args in kept]


def draw_inputs(session: Session, path: Path | None, draws: tuple[int, int] | None = None) -> list[dict]:
    """The inputs Hypothesis draws for the problem, the same every run (one seed), kept at ``path``."""
    drawn: list[dict] = []
    run_generated(session, [], collect=drawn, draws=draws)
    if path is not None:
        cache_mod.save_inputs(path, drawn)
    return drawn


def secret_draws(problem: Problem, options: Options) -> tuple[int, int] | None:
    """(seed, how many) of the inputs only the instructor's verdicts use (half as many as the public ones),
    or None where there are none (see :func:`grader.problem.problems.secret_seed`)."""
    if options.secret_seed is None:
        return None
    return options.secret_seed, max(4, problem.max_examples // 2)


def check_parameters(session: Session, verdict: Verdict, args: dict) -> None:
    """The parameters are part of the answer: a tree that differs from the reference's (a parameter
    missing, extra or misshaped) fails the run, even where the outputs happen to match.

    The graded module's tree is its worker's report, learner code's word (:meth:`Session.params_diff`). It
    can only tell against the code: a difference fails a run, and no report makes a failing run pass.
    A report the outputs contradict (:meth:`Session.tree_contradiction`) is malformed: it ends a run that
    would pass as an error, and is said (and not used) where the run fails. That the tree is the
    statement's is said only where every output agrees, each with every parameter moved: then the
    outputs back it (a parameter nothing uses is one no output can show)."""
    try:
        found = session.params_diff(args)
    except ReferenceError:
        return
    try:  # where the outputs cannot be had (a handout records none on these inputs), they show nothing
        contradiction = session.tree_contradiction(args)
    except (ReferenceError, WorkerFailure, StopGrading):
        contradiction = None
    if contradiction is not None:
        session.tree_unseen = False
        said = f"{MALFORMED_TREE}: {contradiction}"
        if verdict.status == Status.PASS:
            verdict.status, verdict.message = Status.ERROR, said
            verdict.checks.append(Check("parameters", Status.ERROR, said))
        else:
            verdict.checks.append(Check("parameters", Status.WARN, said + "; the grader does not use it"))
        return
    if found is None:
        if session.tree_unseen:
            verdict.checks.append(Check("parameters", Status.WARN, UNSEEN_PARAMETERS))
        return
    differences = len(found) - 1  # after the sentence that introduces them
    if differences <= 0:
        if verdict.status == Status.PASS:
            verdict.checks.append(Check("parameters", Status.PASS, "the parameter tree is the statement's"))
        return
    verdict.params_diff = found
    verdict.checks.append(Check("parameters", Status.FAIL, f"{differences} difference{'s' * (differences > 1)} "
                                                           f"from the statement's parameter tree"))
    if verdict.status == Status.PASS:
        verdict.status = Status.FAIL
        verdict.message = "every output matches, but your parameter tree differs from the one the statement pins"


def grade(problem: Problem, learner_path: Path, options: Options | None = None,
          cases: list[tuple[str, dict]] | None = None, extra=None, trusted: Trusted | None = None,
          subject_key: str | None = None, fixed: bool = True, launch: Launch | None = None,
          found: Callable[[Outcome], None] | None = None) -> Verdict:
    """Grade ``learner_path``. ``cases`` replaces the fixed examples and skips generation (replays).

    ``found(outcome)``, when given, is told the first input that fails as soon as it is known, before it
    is shrunk and explained (the command line prints the verdict line then).
    ``extra(session, verdict)``, when given, runs before the workers close (diagnosis).
    ``trusted`` shares a reference worker between gradings; ``subject_key`` grades a trusted module
    inside that worker instead of a learner's worker. ``launch`` says where the workers come from
    (prepared early by the command line). ``fixed=False`` skips the fixed examples (``grade check``
    uses it to show that the generated inputs alone catch a mistake).
    """
    options = options or Options()
    started = time.monotonic()
    session = Session(problem, learner_path, options, trusted, subject_key, launch)
    verdict = Verdict(problem.slug, Status.PASS, "", isolation=session.isolation)
    replay = cases is not None
    named = cases if replay else [(ex.name, ex.args) for ex in problem.examples] if fixed else []
    try:
        bad = run_cases(session, verdict, named, replay, found)
        conclude(session, verdict, bad)
        # The first worker is needed now; the second (on a re-grade) goes on answering the drawn inputs,
        # which naming a mistake asks for next.
        session.workers.cancel(only=session.workers.first)
        probe = bad.args if bad is not None and bad.args else next(iter([a for _, a in named] + session.drawn), None)
        # A trusted module's tree is only asked for where it could change the verdict (`grade check`
        # shows no more of a failing variant than its failure and its name).
        wanted = (Status.PASS,) if session.shared else (Status.PASS, Status.FAIL, Status.ERROR)
        if problem.parts() and session.workers.loaded and probe is not None and verdict.status in wanted:
            check_parameters(session, verdict, probe)
        if verdict.status == Status.PASS and not session.shared and not replay:
            said = teaches.note(problem.teaches, session.workers.source)
            if said:
                verdict.checks.append(Check("teaches", Status.WARN, said))
        if extra is not None and bad is not None:
            if replay and not session.shared:  # a replay shows what its own case printed
                session.workers.mark_output()
            try:
                extra(session, verdict)
            except (WorkerFailure, ReferenceError, StopGrading):
                pass  # a diagnosis only: the verdict stands without it
    finally:
        verdict.examples_run = session.cases
        verdict.output = session.close()
        verdict.duration_s = round(time.monotonic() - started, 3)
    return verdict


def run_cases(session: Session, verdict: Verdict, named: list[tuple[str, dict]], replay: bool,
              found: Callable[[Outcome], None] | None) -> Outcome | None:
    """The named cases (the fixed examples, or a replay's), then (not in a replay) the drawn inputs, each
    a check on ``verdict``: the first outcome that is not a pass, shrunk where it was drawn, or None."""
    problem = session.problem
    try:
        try:
            if not replay:  # read before learner code starts, like everything trusted
                path, kept = kept_inputs(session)
            problem.properties()
            session.load()
            secret: list[dict] = []
            hidden_draws = secret_draws(problem, session.options)
            if not replay:
                drawn = kept if kept is not None else draw_inputs(session, path)
                if hidden_draws is not None:  # drawn anew each run, kept nowhere
                    secret = draw_inputs(session, None, hidden_draws)
                session.drawn = drawn + secret
            session.prefetch([args for _, args in named] + session.drawn)
            for name, args in named:
                outcome = session.evaluate(name, args)
                verdict.checks.append(Check(name, outcome.status, outcome.message))
                if outcome.status != Status.PASS:
                    if found is not None:
                        found(outcome)
                    return outcome
            if replay:
                return None
            bad = run_drawn(session, secret, hidden_draws, found)
            count = session.cases - len(named)
            verdict.checks.append(Check("generated inputs", bad.status if bad else Status.PASS,
                                        bad.message if bad else f"{count} generated inputs match"
                                        + MOVED_NOTE * problem.moves_parameters))
            return bad
        except StopGrading as stop:
            bad = stop.outcome
        except TrustedTimeout:
            bad = session.clock.out_of_time()
    except ReferenceError as exc:
        raise ProblemError(f"the problem is broken, not your code: {exc}") from None
    verdict.checks.append(Check(bad.name, bad.status, bad.message))
    return bad


def run_drawn(session: Session, secret: list[dict], hidden_draws: tuple[int, int] | None,
              found: Callable[[Outcome], None] | None) -> Outcome | None:
    """The drawn inputs, known already: only if one fails does Hypothesis run again, drawing the same
    inputs (derandomised) up to that one, to shrink it. The smallest failure found, or None."""
    before = session.tally()
    first = next((o for o in (session.evaluate("generated", args) for args in session.drawn)
                  if o.status != Status.PASS), None)
    if first is None:
        return None
    if found is not None:
        found(first)
    if session.trusted.recorded:
        return smallest_failing(session, first)
    session.rewind(before)
    # Shrunk from the draws it came from: the public ones, or the instructor's own.
    digest = session.trusted.digest(first.args)
    from_secret = any(session.trusted.digest(a) == digest for a in secret)
    bad = run_generated(session, [], draws=hidden_draws if from_secret else None)
    if bad is None:  # seen failing once, then not again: that is a failure too
        bad = first
        bad.message += DIFFERENT_ANSWER
        session.count_at_least(before.cases + len(session.drawn))
    return bad


def conclude(session: Session, verdict: Verdict, bad: Outcome | None) -> None:
    """The verdict's status and message from the first failure (``bad``) or the cases counted, and the
    check that says whether the learner's function ran under jax.jit."""
    if bad is not None:
        verdict.status, verdict.message, verdict.counterexample = bad.status, bad.message, bad
    else:
        verdict.message = (f"all {session.cases} cases match the reference" if session.cases != 1
                           else "the 1 case matches the reference")
    if session.jit_error:
        verdict.checks.append(Check("jit", Status.WARN, "your function did not run under jax.jit with its "
                                    f"integer arguments static, so it was graded eagerly ({session.jit_error})"))
    elif session.seen and session.options.jit:
        verdict.checks.append(Check("jit", Status.PASS, "runs under jax.jit with its integer arguments static"))
