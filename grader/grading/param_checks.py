"""The parameters are part of the answer: the graded module's Flax parameter tree against the reference's, what
the outputs show against the tree its worker reported, and the initial values behind a difference.

The graded module's tree and values are what its worker reports, where learner code runs and can say
anything: the grader computes the differences, checks a report against the outputs before anything is said
from it, and never lets a report alone make a verdict (:func:`check_parameters`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from grader.core import kinds
from grader.core.verdict import Check, Status, Verdict
from grader.grading.errors import ReferenceError
from grader.grading.workers import Clock, GradedSide, StopGrading
from grader.problem.problems import Problem
from grader.sandbox import operations
from grader.sandbox.pool import WorkerFailure

UNSEEN_PARAMETERS = ("your code creates no parameters the grader can see (it looks for those that linen's init "
                     "and NNX modules make), so neither the parameter tree nor the runs with the parameters moved "
                     "from their initial values could check them; create them as the stub does")

MALFORMED_TREE = ("the process running your code broke the grader's protocol: the parameter tree it reported "
                  "contradicts your outputs")


class ParameterChecks:
    """One run's checks of the graded module's parameters, asked by the session (:meth:`diff` and
    :meth:`contradiction` for :func:`check_parameters`, :meth:`ask_values` and :meth:`values` for diagnosis)
    of the graded side ``workers`` and the reference's side ``trusted``; ``answers(cases)`` are the graded
    module's flat outputs (:meth:`grader.grading.session.Session.answers`)."""

    def __init__(self, problem: Problem, trusted, workers: GradedSide, clock: Clock,
                 answers: Callable[[list[dict]], list[np.ndarray | None]]):
        self.problem, self.trusted, self.workers, self.clock, self.answers = problem, trusted, workers, clock, answers
        self.tree_unseen = False  # the reference creates parameters, and the graded module none that Flax makes
        # (the reference's tree, the graded module's as its worker reported it): what contradiction checks
        self.tree_report: tuple[dict, dict | None] | None = None
        self.reference_values: dict | None = None  # the reference's initial parameters, while the learner's are due
        self.values_args: dict | None = None  # the input they were asked on

    def diff(self, args: dict) -> list[str] | None:
        """Missing, extra and misshaped parameters of the graded module's Flax tree on ``args``, by path
        (empty if the trees agree; None where there is no tree to compare: the problem builds none, the
        learner's is not a linen tree, or a worker failed). A trusted module's tree is traced once per
        signature (the shapes do not depend on the values).

        The graded module's tree is what its worker reports, where learner code runs and can say anything:
        the grader computes the differences, and :meth:`contradiction` checks the report against the
        outputs before anything is said from it (see :func:`check_parameters`)."""
        signature = repr(kinds.signature(self.problem.args, kinds.with_moved(args, False)))  # moving changes no shape
        trees = self.trusted.trees
        # The trusted modules among the two (a trusted module graded in the trusted worker is one) are traced
        # there, each once per signature.
        traced = [key for key in dict.fromkeys(["reference", *self.workers.trusted_keys])
                  if (key, signature) not in trees]
        asked = []
        if traced:  # the reference's worker, started only for a tree not kept from an earlier run
            worker = self.trusted.start()
            for key in traced:
                worker.request(*operations.params(key, self.problem.args, args))
                asked.append((worker, key))
        own = self.workers.ask_tree(args)  # the graded module's worker, asked; None where its tree is traced above
        if own is not None:
            asked.append((own, self.workers.key))
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
        if own is None:
            actual = trees[self.workers.key, signature]
        if refused:  # an error where a tree was due: no tree to compare, nor one known to be missing
            return None
        self.tree_unseen = bool(expected) and actual is None
        if expected and own is not None:  # a worker's report: what the outputs may show against it
            self.tree_report = (expected, actual)
        if not expected or actual is None:  # no tree that Flax makes on one side
            return None
        return tree_differences(expected, actual)

    def contradiction(self, args: dict) -> str | None:
        """What the graded module's outputs show against the tree its worker reported (:meth:`diff`, on
        ``args``), or None where they show nothing against it (and for a trusted module's tree).

        A parameter moved (:mod:`grader.sandbox.moved`) changes the output of code that has it, by a move
        drawn from its path and shape; the outputs are compared here, in the grader. So a report that a
        parameter is missing (or that there are none) is contradicted where the graded module's output
        changes clearly when the grader moves it; a report that a parameter has another shape than the
        reference's, where the output with it moved is the reference's with it moved (and that differs from
        the reference's at the initial values). What no output shows (a parameter that nothing uses) is
        not checked: the verdict never comes from the report alone but where it tells against the code."""
        if self.tree_report is None:
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

    def ask_values(self, args: dict) -> None:
        """Start the learner's worker finding the initial values of its parameters on ``args`` (it works on
        them while the trusted side runs the known mistakes); :meth:`values` takes the answer. Where the
        graded module reports none (a trusted one), the reference's are not asked either."""
        self.values_args = args
        if not self.workers.ask_values(args):
            return
        reference: dict = {}
        try:
            reference = self.trusted.param_values(args) or {}
        finally:
            self.reference_values = reference  # the learner's answer is due, whatever the reference's side did
            self.workers.bound_values(reference)

    def values(self) -> tuple[dict, dict] | None:
        """The initial values of the parameters the learner's code and the reference create (``{path: array}``
        each) on the input :meth:`ask_values` was given, or None where either creates none that Flax
        makes, or the worker failed. The reference's are kept on disk, like its outputs.

        The learner's are what its worker reports: where they differ from the reference's, they are given
        only where the outputs bear them out (:meth:`values_explain`), else None."""
        graded = self.workers.take_values()
        reference, self.reference_values = self.reference_values, None
        if not (graded and reference):
            return None
        return (graded, reference) if self.values_explain(graded, reference) else None

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


def check_parameters(session, verdict: Verdict, args: dict) -> None:  # (session: grader.grading.session.Session)
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
