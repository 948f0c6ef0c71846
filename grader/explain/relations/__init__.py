"""Diagnoses that need no known mistake: the relation between the expected and the actual output.

:func:`diagnose` looks for ONE relation that explains every mismatching value of one output: a constant
factor, rounding at the level of bfloat16 or float16, a transpose, a permutation, reversal or shift of an
axis, the right values in another order (a flattening order), or NaN/inf at places the inputs explain
(all-zero rows, values whose squares overflow, whole rows, a triangle). It returns a
:class:`~grader.core.verdict.Diagnosis` only when exactly one relation holds everywhere, and None otherwise:
no mismatch, an arbitrary wrong answer, a relation that holds on part of the output, or two relations
that fit equally well. A wrong diagnosis is worse than none, so every check asks for evidence beyond a
coincidence (several values that confirm it, errors spread the way rounding spreads them, a location
that matches exactly).

The ids are those :data:`grader.explain.ids.RELATIONS` declares. The relations are grouped by family:
:mod:`.position` (a transpose, a reversal, a shift or permutation of an axis, a flattening order, the right
values in other places), :mod:`.values` (a constant factor, reduced precision, a residual added or left
out), :mod:`.locations` (NaN, inf or overflow where the inputs explain it); :mod:`.common` holds the two
outputs as every check reads them, :mod:`.words` how a message says numbers, indices and axes.

Pure numpy; the arrays are small (a few thousand values), and every search is bounded.
"""

from __future__ import annotations

import numpy as np

from grader.core.verdict import Diagnosis
from grader.explain import ids
from grader.explain.relations.common import Found, outputs
from grader.explain.relations.locations import nonfinite, overflow_rows
from grader.explain.relations.position import flatten_order, permuted, reversal, shifted, transposed, wrong_order
from grader.explain.relations.values import constant_factor, input_added, reduced_precision


def diagnose(expected: np.ndarray, actual: np.ndarray, args: dict, *, rtol: float, atol: float,
             exact: bool = False) -> Diagnosis | None:
    """The one relation that explains every value where ``actual`` differs from ``expected``, or None.

    ``expected`` and ``actual`` are the reference's and the learner's output in the output's natural
    shape (``expected`` finite, ``actual`` possibly not); ``args`` are the call's arguments (name ->
    Python int/float or numpy array), used to name factors and to locate non-finite values. Values are
    equal when ``|a - e| <= atol + rtol * |e|``, or exactly when ``exact``.
    """
    with np.errstate(all="ignore"):
        ctx = outputs(expected, actual, args, rtol=rtol, atol=atol, exact=exact)
        if ctx is None or not ctx.mism.any():
            return None
        if not np.isfinite(ctx.a).all():
            return nonfinite(ctx)
        found = []
        for check in (transposed, reversal, shifted, flatten_order, permuted, constant_factor,
                      reduced_precision, overflow_rows, wrong_order, input_added):
            f = check(ctx)
            if f is not None:
                found.append(f)
        return _choose(found)


def _choose(found: list[Found]) -> Diagnosis | None:
    """Exactly one relation, after dropping those a more specific one implies; else None."""
    specific = [f for f in found if f.kind != "multiset"]
    keep = []
    for f in found:
        if f.kind == "multiset" and specific:
            continue  # the same values in other places: implied by any positional reading
        if f.diagnosis is not None and f.diagnosis.id == ids.PERMUTED_AXIS and any(
                g.diagnosis is not None and g.axis == f.axis
                and (g.diagnosis.id == ids.REVERSED_AXIS or (g.diagnosis.id == ids.SHIFTED and g.wraps)) for g in found):
            continue  # a reversal or a roll of that axis is the more specific reading of the permutation
        keep.append(f)
    if len(keep) != 1 or keep[0].diagnosis is None:
        return None
    return keep[0].diagnosis

