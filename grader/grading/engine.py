"""The grading engine: fixed cases first, then the inputs Hypothesis draws, then shrinking a failure.

It only drives and records. The cases of a run are a :class:`~grader.grading.session.Session`'s (learner
code runs in confined workers, :mod:`grader.sandbox.pool`, that :mod:`grader.grading.workers` schedules, the
reference in the trusted side's, :mod:`grader.grading.trusted`), the inputs drawn and shrunk are
:mod:`grader.grading.generation`'s, the parameters are checked by :mod:`grader.grading.param_checks`,
comparisons made in :mod:`grader.core.compare`; what a failure means is for :mod:`grader.explain.diagnosis`,
how it reads for :mod:`grader.render.report`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from grader.core.verdict import Check, Outcome, Status, Verdict
from grader.grading.generation import (DIFFERENT_ANSWER, DRAW_SEED, draw_inputs, kept_inputs, run_generated,
                                       secret_draws)
from grader.grading.param_checks import MALFORMED_TREE, UNSEEN_PARAMETERS, check_parameters, tree_differences
from grader.grading.session import Options, Session
from grader.grading.errors import ReferenceError, TrustedTimeout
from grader.grading.trusted import Trusted
from grader.grading.workers import StopGrading
from grader.problem import teaches
from grader.problem.problems import Problem, ProblemError
from grader.sandbox.pool import WorkerFailure
from grader.sandbox.zygote import Launch

__all__ = ["DRAW_SEED", "MALFORMED_TREE", "UNSEEN_PARAMETERS", "Options", "Session", "StopGrading", "check_parameters",
           "draw_inputs", "grade", "kept_inputs", "run_generated", "tree_differences"]

MOVED_NOTE = ", each run with every parameter moved from its initial value"


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
        graded = session.workers
        graded.cancel(only=graded.first)
        probe = bad.args if bad is not None and bad.args else next(iter([a for _, a in named] + session.drawn), None)
        if problem.parts() and graded.loaded and probe is not None and verdict.status in graded.trees_checked_on:
            check_parameters(session, verdict, probe)
        if verdict.status == Status.PASS and graded.source is not None and not replay:
            said = teaches.note(problem.teaches, graded.source)
            if said:
                verdict.checks.append(Check("teaches", Status.WARN, said))
        if extra is not None and bad is not None:
            if replay:  # a replay shows what its own case printed
                graded.mark_output()
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
