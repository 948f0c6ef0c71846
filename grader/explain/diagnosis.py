"""Explain a failure: the known mistake it matches, what the relation between the expected and the actual
output says, the first wrong part of a model, broken properties."""

from __future__ import annotations

import numpy as np

from grader.core import kinds
from grader.core.compare import same_values
from grader.explain import ids, parts, relations
from grader.explain.dependence import dependence
from grader.grading.engine import UNSEEN_PARAMETERS, Session
from grader.core.verdict import Check, CheckKind, Diagnosis, Outcome, Pitfall, Status, Verdict

PROBES = 48  # inputs beyond the failing one on which a named mistake must agree with the learner's outputs
ONE_AT_A_TIME = 12  # parameters moved one at a time to find those an output does not follow (at most)


def explain(session: Session, verdict: Verdict, name_only: bool = False, command: str = "grade") -> None:
    """Add what can be said about the failure to ``verdict`` (runs while the workers are alive).
    ``name_only``: just the known mistake it matches (what `grade check` looks at). ``command``: how the
    learner runs `grade`, for the hints."""
    outcome = verdict.counterexample
    if outcome is None or not outcome.args or verdict.status not in (Status.FAIL, Status.ERROR):
        return
    if verdict.status == Status.FAIL and outcome.actual is not None:
        if not name_only and session.problem.moves_parameters:  # found while the known mistakes run
            session.ask_param_values(kinds.with_moved(outcome.args, False))
        verdict.pitfall, verdict.pitfall_candidates = name_pitfall(session, outcome)
        if name_only:
            return
        found = parameter_values(session)
        if found is not None:  # values drawn for another parameter explain it: no known mistake does
            verdict.pitfall, verdict.pitfall_candidates = None, []
        verdict.diagnosis = found or parameters_followed(session, outcome) or relation(session, outcome)
        if verdict.diagnosis is None and verdict.pitfall is None:
            verdict.diagnosis = dependence(session, outcome)
        verdict.checks.extend(property_checks(session, outcome))
    if not name_only:
        part = parts.first_wrong_part(session, outcome.args, command)
        if part is not None and verdict.diagnosis is not None and verdict.diagnosis.id == ids.PARAMETERS_NOT_FOLLOWED \
                and parts.first_wrong_part(session, kinds.with_moved(outcome.args, False), command) is not None:
            part = None  # a part wrong where the whole output is right is not what the entry computes with
        verdict.first_wrong_part = part
        if verdict.diagnosis is None and part is not None:
            verdict.diagnosis = part.diagnosis  # its values in another layout


def parameter_values(session: Session) -> Diagnosis | None:
    """Where a parameter of the learner's holds the initial values the reference gives another one (two
    ``self.param`` calls in another order in ``@nn.compact``, one random key used for two parameters):
    every computation may be right, and the values are not. None where that is not so, or where nothing
    was asked (:meth:`grader.grading.engine.Session.ask_param_values`)."""
    found = session.param_values()
    if found is None:
        return None
    graded, reference = found
    same = lambda a, b: a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=0)  # noqa: E731
    swaps = []
    for path in sorted(set(graded) & set(reference)):
        if same(graded[path], reference[path]):
            continue
        other = next((p for p in sorted(reference) if p != path and same(graded[path], reference[p])), None)
        if other is not None:
            swaps.append(f"your {short(path)} holds the values the reference gives {short(other)}")
    if not swaps:
        return None
    return Diagnosis(ids.PARAMETER_VALUES, "; ".join(swaps) + ". Flax draws each parameter's initial values from "
                     "its path and its place among the module's parameters: create them in the stub's order, "
                     "each with its own name (the computation may well be right).")


def short(path: str) -> str:
    return f"`{path.removeprefix('params/')}`"


def parameters_followed(session: Session, outcome: Outcome) -> Diagnosis | None:
    """On an input run with the parameters moved from their initial values: if the learner's output is
    right at the initial values, the mistake is in how it uses the parameters; moved one at a time (in
    a small model), those the output does not follow are named."""
    args = outcome.args
    if kinds.moved(args) is not True:
        return None
    trusted = session.trusted
    plain = kinds.with_moved(args, False)
    trusted.prefetch("reference", [plain])
    answer = session.answers([plain])[0]
    expected = trusted.outputs("reference", [plain])[0]
    if answer is None or not trusted.agrees(plain, expected, answer):
        return None
    lead = ("At the parameters init gives, your output is right; with every parameter moved from its initial "
            "value (norm weights not 1, biases not 0), it is not: your code does not use its parameters as "
            "the reference does")
    if session.tree_unseen:
        return Diagnosis(ids.PARAMETERS_NOT_FOLLOWED, f"{lead}: {UNSEEN_PARAMETERS}.")
    tree = session.trusted.trees.get(("reference", repr(kinds.signature(session.problem.args, plain))))
    paths = sorted(path.removeprefix("params/") for path in tree or {})
    if not paths or len(paths) > ONE_AT_A_TIME:
        return Diagnosis(ids.PARAMETERS_NOT_FOLLOWED, lead + ".")
    cases = [kinds.with_moved(args, (path,)) for path in paths]
    trusted.prefetch("reference", cases)
    answers = session.answers(cases)
    references = trusted.outputs("reference", cases)
    ignored, misused = [], []
    for path, case, got, want in zip(paths, cases, answers, references):
        if got is None or trusted.agrees(case, want, got):
            continue
        (ignored if trusted.agrees(plain, answer, got) else misused).append(f"`{path}`")
    said = []
    if ignored:
        said.append(f"your output does not change when {', '.join(ignored)} "
                    f"{'moves' if len(ignored) == 1 else 'move'} (the reference's does): "
                    f"{'it is' if len(ignored) == 1 else 'they are'} ignored, or replaced by arrays of your own")
    if misused:
        said.append(f"moving {', '.join(misused)} changes your output otherwise than the reference's: "
                    f"{'it is' if len(misused) == 1 else 'they are'} used in the wrong place or the wrong way")
    if not said:
        return Diagnosis(ids.PARAMETERS_NOT_FOLLOWED, lead + ".")
    return Diagnosis(ids.PARAMETERS_NOT_FOLLOWED, f"{lead}. Moved one at a time, " + "; ".join(said) + ".")


def relation(session: Session, outcome: Outcome) -> Diagnosis | None:
    """What the relation between the expected and the actual output says, where one explains every
    mismatching value (:mod:`grader.explain.relations`)."""
    c = outcome.comparison
    if c is None or c.actual is None or c.stage not in ("finite", "values"):
        return None
    return diagnose(session, outcome.args, c.expected, c.actual) or factor_elsewhere(session, outcome)


FACTOR_TRIES = 8  # other failing outputs a constant factor is looked for on


def factor_elsewhere(session: Session, outcome: Outcome) -> Diagnosis | None:
    """A constant factor the failing output cannot show alone (its rows copies of one another, as a shrunk
    model input of one repeated token gives: a per-row quantity would fit as well), shown by another failing
    output of the run whose non-array arguments are the failing input's: the factor found there must hold
    on the failing output too, value for value."""
    problem, trusted = session.problem, session.trusted
    if problem.exact:
        return None
    plain = {name: value for name, value in outcome.args.items() if not hasattr(value, "shape")}
    failing = trusted.digest(outcome.args)
    e0, a0 = (np.asarray(x, np.float64).reshape(-1) for x in (outcome.comparison.expected, outcome.comparison.actual))
    tries = 0
    for args, actual in session.seen:
        if {n: v for n, v in args.items() if not hasattr(v, "shape")} != plain or trusted.digest(args) == failing:
            continue
        expected = trusted.cached("reference", args)
        if expected is None or expected.size != actual.size or trusted.agrees(args, expected, actual):
            continue
        shape = problem.natural_shape(args)
        found = diagnose(session, args, expected.reshape(shape), actual.reshape(shape))
        tries += 1
        if found is not None and found.id == ids.CONSTANT_FACTOR:
            e, a = expected.astype(np.float64), actual.astype(np.float64)
            factor = float(e @ a / (e @ e))
            if same_values(factor * e0, a0, problem.rtol, problem.atol).all():
                return Diagnosis(ids.CONSTANT_FACTOR, found.message + " (Seen on another failing input with the "
                                 "same sizes, whose rows differ from one another; the input shown gives the same "
                                 "factor.)")
            return None
        if tries >= FACTOR_TRIES:
            return None
    return None


def diagnose(session: Session, args: dict, expected: np.ndarray, actual: np.ndarray) -> Diagnosis | None:
    """:func:`grader.explain.relations.diagnose` on outputs in their natural shape; a relation that cannot be
    computed says nothing (a diagnosis never costs the verdict)."""
    problem = session.problem
    try:
        return relations.diagnose(expected, actual, args, rtol=problem.rtol, atol=problem.atol, exact=problem.exact)
    except (ArithmeticError, ValueError, TypeError, IndexError):
        return None


def matches(session: Session, args: dict, variant_out: np.ndarray, actual: np.ndarray) -> bool:
    """Whether the learner's output is the variant's, within the problem's tolerance, non-finite values
    in the same places. Cells the problem's ``borderline`` hook names are skipped: there a formula lands
    exactly on a boundary, and a mistake computed in other arithmetic may fall on either side of it."""
    problem = session.problem
    if variant_out.shape != actual.shape or variant_out.dtype != actual.dtype:
        return False
    keep = np.ones(actual.shape, dtype=bool)
    hook = getattr(session.trusted.hooks, "borderline", None)
    if hook is not None:
        keep = ~np.asarray(hook(args), dtype=bool).reshape(actual.shape)
    v, a = variant_out[keep].astype(np.float64), actual[keep].astype(np.float64)
    finite = np.isfinite(v)
    if not np.array_equal(finite, np.isfinite(a)):
        return False
    v, a = v[finite], a[finite]
    if problem.exact:
        return bool(np.array_equal(v, a))
    return bool(np.all(np.abs(a - v) <= problem.atol + problem.rtol * np.abs(v)))


def name_pitfall(session: Session, outcome: Outcome) -> tuple[Pitfall | None, list[str]]:
    """The known-wrong variant the learner's outputs agree with, and the variants that remained.

    A variant stays a candidate while it agrees with the learner's output: on the failing input, then on
    every other input the run has (the fixed examples, the drawn inputs, those seen while shrinking; the
    learner's outputs on those it had not reached are fetched now). Agreeing on one small input can be a
    coincidence; agreeing everywhere tells the variant apart from every other and from the reference.
    Only a single remaining candidate is named; two that cannot be told apart are both returned unnamed.

    A variant whose module sets ``DIAGNOSIS`` (an id of :data:`grader.explain.ids.RELATIONS`) also agrees wherever the
    learner's output fails with that diagnosis: a mistake such as reduced precision has many forms whose
    values differ, but one signature."""
    trusted = session.trusted
    notes = trusted.pitfalls()
    if not notes:
        return None, []
    # Only a variant whose mistake shows at the stage where the learner's output fails (in its values, or
    # at the stage it declares: a wrong shape is no sign error) can name it.
    stage = failing_stage(outcome)
    keys = {f"pitfall_{name}": note for name, note in notes.items() if stage in ("values", note[2])}
    if not keys:
        return None, []
    jit = session.options.jit and session.jit_error is None  # as the learner's code ran: bf16 rounds differently
    # None: the variant raised there. A second worker helps while the learner's worker waits.
    outputs = trusted.outputs_on(list(keys), outcome.args, jit, share=not session.shared)
    signatures = {key: diagnosis for key, (_, diagnosis, _) in keys.items()}
    expected = trusted.output("reference", outcome.args)
    actual = outcome.actual.reshape(-1)
    candidates = [key for key, out in outputs.items()
                  if fits(session, outcome.args, out, actual, expected, signatures[key], strict=True)]
    # A known-wrong variant graded as the learner (`grade check`) agrees with its own outputs everywhere:
    # only the other candidates need the probes.
    others = [key for key in candidates if key != session.key]
    if others:
        probes = evidence(session, outcome.args)
        if not session.shared:
            trusted.prefetch("reference", probes)  # computed while the learner's code answers
        answers = session.answers(probes)
        references = trusted.outputs("reference", probes)
        for key in others:
            for args, out, answer, reference in zip(probes, trusted.outputs(key, probes), answers, references):
                if answer is not None and not fits(session, args, out, answer, reference, signatures[key]):
                    candidates.remove(key)
                    break
    names = [key.removeprefix("pitfall_") for key in candidates]
    if len(names) != 1:
        return None, names
    return Pitfall(names[0], notes[names[0]][0]), names


def evidence(session: Session, failing: dict) -> list[dict]:
    """Inputs other than ``failing`` to tell mistakes apart on: the fixed examples, the drawn inputs and
    those seen while shrinking (at most PROBES, without repeats)."""
    digest = session.trusted.digest
    cases = [ex.args for ex in session.problem.examples] + session.drawn + [args for args, _ in session.seen]
    unique = {digest(args): args for args in cases}
    unique.pop(digest(failing), None)
    return list(unique.values())[:PROBES]


def fits(session: Session, args: dict, variant_out: np.ndarray | None, actual: np.ndarray,
         expected: np.ndarray, signature: str | None, strict: bool = False) -> bool:
    """Whether the learner's ``actual`` output on ``args`` is what the variant gives (``variant_out``),
    or, for a variant with a ``signature``, an output the relations call by that name: ``strict`` on
    the failing input; on others, where they name nothing, nothing speaks against it."""
    if variant_out is not None and matches(session, args, variant_out, actual):
        return True
    if signature is None or actual.shape != expected.shape:
        return False
    shape = session.problem.natural_shape(args)
    found = diagnose(session, args, expected.reshape(shape), actual.reshape(shape))
    if found is not None:
        return found.id == signature
    # No relation explains this output alone (too few values differ to tell, or none): it speaks against
    # the signature only on the failing input itself, which must show it.
    return not strict


def failing_stage(outcome: Outcome) -> str | None:
    """Where ``outcome`` fails: the comparison's stage, "error" where the code raised, None otherwise."""
    if outcome.status == Status.ERROR and outcome.error is not None:
        return "error"
    return outcome.comparison.stage if outcome.status == Status.FAIL and outcome.comparison is not None else None


def property_checks(session: Session, outcome: Outcome) -> list[Check]:
    """Reference-free checks from ``problems/<slug>/properties.py`` on the failing output."""
    module = session.problem.properties()
    if module is None or outcome.comparison is None or outcome.comparison.actual is None:
        return []
    checks = []
    for check in getattr(module, "PROPERTIES", []):
        if check(outcome.args, outcome.comparison.expected):
            continue  # the reference's own output breaks it here (parameters moved): it says nothing
        problem_text = check(outcome.args, outcome.comparison.actual)
        name = f"property: {check.__name__.replace('_', ' ')}"
        checks.append(Check(name, Status.FAIL if problem_text else Status.PASS,
                            problem_text or (check.__doc__ or "").strip().splitlines()[0], CheckKind.PROPERTY))
    return checks
