"""Hypothesis's part of a run: the inputs it draws for a problem (the same every run, kept between runs), and
shrinking a failure found among them."""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grader.core.verdict import Outcome, Status
from grader.grading import cache as cache_mod
from grader.grading.workers import StopGrading
from grader.problem.problems import Problem, ProblemError

if TYPE_CHECKING:
    from grader.grading.session import Options, Session

SHRINK_SECONDS = 20.0  # time allowed for shrinking once a failure is found
KEEP_FAILURES = 8  # failing cases kept: the last is the smallest, reported if shrinking runs out of time
DRAW_SEED = 20261126  # the drawn inputs of every problem follow from it (and from its strategies)
DIFFERENT_ANSWER = ("; called again with the same input, your function answered differently: a correct "
                    "function gives the same answer every time (is there hidden state, or randomness "
                    "that does not come from the seed?)")


class CaseFailed(Exception):
    """A failing case; Hypothesis shrinks the input that raised it."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


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
    or None where there are none (see :func:`grader.problem.checkout.secret_seed`)."""
    if options.secret_seed is None:
        return None
    return options.secret_seed, max(4, problem.max_examples // 2)
