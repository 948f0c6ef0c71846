"""Which output row depends on which input position: the learner's function against the reference's.

For a problem whose ``problem.toml`` names ``positions`` (array arguments, and the axis of each whose index
is the position of the output's row of that index), each position of the failing input is changed alone and
both functions run again. An output row that changes where the reference's does not sees a position it must
not (a query that sees a later key); one that does not change where the reference's does ignores a position
it must use (a key a query should see). That is a fact about the learner's function, found with no known
mistake; it says which rows and which positions, and nothing where both depend on the same positions (nor
in a handout, whose record holds no answer on the changed inputs).
"""

from __future__ import annotations

import numpy as np

from grader.core.compare import same_values
from grader.core.verdict import Diagnosis, Outcome
from grader.explain import ids

MAX_POSITIONS = 16  # positions changed one at a time, per argument (a shrunk failing input has a few)
ROWS_SHOWN = 4


def changed(args: dict, name: str, axis: int, j: int) -> dict:
    """``args`` with position ``j`` of the array ``name`` (along ``axis``) changed: 1 added to a float's
    values, an integer (a token id) moved to another valid one (one less, or 1 where it is 0)."""
    value = np.array(args[name])
    index = (slice(None),) * axis + (j,)
    if value.dtype.kind == "f":
        value[index] = value[index] + 1
    else:
        value[index] = np.where(value[index] > 0, value[index] - 1, 1)
    return {**args, name: value}


def rows_changed(before: np.ndarray, after: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """For each row (first axis) of two outputs of one shape: whether any of its values differs."""
    differs = ~same_values(before, after, rtol, atol)
    return differs.reshape(differs.shape[0], -1).any(axis=1)


def dependence(session, outcome: Outcome) -> Diagnosis | None:  # (session: grader.grading.engine.Session)
    """Where the learner's output rows depend on other input positions than the reference's, on the failing
    input (each position of each ``positions`` argument changed alone); None where they depend on the same
    ones, the problem names no positions, or an answer is missing."""
    problem = session.problem
    args = outcome.args
    if not problem.positions or outcome.comparison is None or outcome.actual is None or not args:
        return None
    if session.trusted.recorded:  # a handout's record holds no answer on the changed inputs
        return None
    shape = tuple(problem.natural_shape(args))
    if len(shape) < 1 or outcome.actual.size != int(np.prod(shape)):
        return None
    probes = []
    for name, axis in problem.positions.items():
        value = np.asarray(args.get(name))
        if value.ndim > axis and 1 < value.shape[axis] <= MAX_POSITIONS:
            probes += [(name, j, changed(args, name, axis, j)) for j in range(value.shape[axis])]
    if not probes:
        return None
    trusted = session.trusted
    cases = [case for *_, case in probes]
    trusted.prefetch("reference", cases)  # computed while the learner's code answers
    answers = session.answers(cases)
    references = trusted.outputs("reference", cases)
    if any(a is None or r is None for a, r in zip(answers, references)):
        return None
    expected = outcome.comparison.expected.reshape(shape)
    actual = outcome.actual.reshape(shape)
    said = []
    for name in problem.positions:
        found = [(j, rows_changed(expected, r.reshape(shape), problem.rtol, problem.atol),
                 rows_changed(actual, a.reshape(shape), problem.rtol, problem.atol))
                 for (n, j, _), a, r in zip(probes, answers, references) if n == name]
        if found and (differences := _differences(found)):
            said.append(f"changing {name} one position at a time, " + "; ".join(differences))
    if not said:
        return None
    return Diagnosis(ids.DEPENDENCE, "Your output's rows depend on other input positions than the reference's: "
                     + "; ".join(said) + ".")


def _differences(found: list[tuple[int, np.ndarray, np.ndarray]]) -> list[str]:
    """What the rows' dependence on one argument's positions shows (``found``: each position, and for each
    row whether the reference's and the learner's output changed): the positions a row follows that the
    reference's does not, and those it ignores."""
    rows = len(found[0][1])
    sees = {i: [j for j, ref, mine in found if mine[i] and not ref[i]] for i in range(rows)}
    ignores = {i: [j for j, ref, mine in found if ref[i] and not mine[i]] for i in range(rows)}
    said = []
    for pairs, verb in ((sees, "changes"), (ignores, "does not change")):
        wrong = {i: js for i, js in pairs.items() if js}
        if not wrong:
            continue
        shown = [f"{'your row' if not k else 'row'} {i} {verb} with position{'s' * (len(js) > 1)} {_listing(js)}"
                 for k, (i, js) in enumerate(list(wrong.items())[:ROWS_SHOWN])]
        more = len(wrong) - ROWS_SHOWN
        text = ", ".join(shown) + (f", and {more} more rows" if more > 0 else "")
        flat = [(i, j) for i, js in wrong.items() for j in js]
        if verb == "changes" and all(j > i for i, j in flat):
            text += " (each later than the row's own: the reference's row i depends on positions up to i only)"
        elif verb == "changes":
            text += " (the reference's rows do not depend on them there)"
        elif all(j == i for i, j in flat):
            text += " (the row's own position, on which the reference's row depends)"
        else:
            text += " (on which the reference's rows depend)"
        said.append(text)
    return said


def _listing(js: list[int]) -> str:
    return ", ".join(map(str, js)) if len(js) <= 6 else ", ".join(map(str, js[:6])) + ", ..."
