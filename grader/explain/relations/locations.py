"""Relations of location: NaN, inf or wrong values exactly where the inputs explain them (rows of zeros, values
whose squares or exp overflow float32), or in a pattern of the output (whole rows or columns, a triangle)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from grader.core.verdict import Diagnosis
from grader.explain import ids
from grader.explain.relations.common import Ctx, Found, as_rows
from grader.explain.relations.words import index_text, listing, plural, sci

_F32_MAX = float(np.finfo(np.float32).max)  # 3.40e38
_SQRT_F32_MAX = math.sqrt(_F32_MAX)  # 1.84e19: larger values overflow when squared
_LOG_F32_MAX = math.log(_F32_MAX)  # 88.72: exp of larger values overflows


@dataclass
class _Grouping:
    name: str
    rank: int  # 0: same shape as the output; 1: the output's leading axes; 2: same leading axes
    x_rows: np.ndarray  # (G, m): the input's row for each group
    scalar: bool  # one input value per group


def _groupings(ctx: Ctx) -> list[_Grouping]:
    out = []
    s_out = ctx.shape
    for name, x in ctx.args.arrays.items():
        if x.shape == s_out:
            out.append(_Grouping(name, 0, as_rows(x), False))
        elif 1 <= x.ndim < len(s_out) and s_out[:x.ndim] == x.shape:
            out.append(_Grouping(name, 1, x.reshape(-1, 1), True))
        elif x.ndim >= 2 and len(s_out) >= 2 and x.shape[:-1] == s_out[:-1]:
            out.append(_Grouping(name, 2, as_rows(x), False))
    return out


def _out_rows(g: _Grouping, mask: np.ndarray) -> np.ndarray:
    """Per group: whether ``mask`` holds anywhere in that group's part of the output."""
    return mask.reshape(g.x_rows.shape[0], -1).any(axis=1)


def _location_patterns(g: _Grouping) -> list[tuple[int, str, np.ndarray, dict]]:
    """(order, key, rows, phrases) for each row predicate of the input ``g`` that holds somewhere;
    ``phrases`` says it for some rows ("where"), for every row ("all") and for a single row ("one")."""
    X = g.x_rows
    nm = g.name
    x32 = X.astype(np.float32)
    zero = np.all(X == 0, axis=1)
    vanish = np.all(x32 * x32 == 0, axis=1)  # squares that round to 0 in float32
    sq_over = np.sum(X * X, axis=1) > _F32_MAX
    exp_over = np.max(X, axis=1) > _LOG_F32_MAX

    def phrases(pred: str) -> dict:  # pred: "is all zeros", said of one row of the input
        if g.scalar:
            return {"where": f"where {nm} {pred}", "all": f"{nm} {pred} in every row", "one": f"{nm} {pred}"}
        return {"where": f"where {nm} {pred}", "all": f"every row of {nm} {pred}", "one": f"{nm} {pred}"}

    pats = [(0, "zero", zero, phrases("is 0" if g.scalar else "is all zeros"))]
    if not np.array_equal(vanish, zero):
        pats.append((1, "vanish", vanish, phrases("is zero or so small that its squares round to 0 in float32")))
    if sq_over.any():
        if np.all(np.max(np.abs(X), axis=1)[sq_over] > _SQRT_F32_MAX):
            pred = f"has values beyond {sci(_SQRT_F32_MAX)} in size"
        else:
            pred = f"has squares that add up past float32's largest value ({sci(_F32_MAX)})"
        pats.append((2, "square", sq_over, phrases(pred)))
    if not g.scalar:  # one value per row (an id, a length) is not what goes through exp
        pats.append((3, "exp", exp_over, phrases(f"has values above {_LOG_F32_MAX:.1f}")))
    return [p for p in pats if p[2].any()]


def _explain_by_inputs(ctx: Ctx, bad: np.ndarray, need_bad: bool):
    """The input row predicate whose rows are exactly where the output goes wrong: (key, names, rows, phrase,
    grouping) or None."""
    results = []
    for g in _groupings(ctx):
        G = g.x_rows.shape[0]
        if ctx.n % G:
            continue
        bad_rows = _out_rows(g, bad)
        mism_rows = _out_rows(g, ctx.mism)
        for order, key, rows, phrase in _location_patterns(g):
            if key == "exp" and rows.all():
                continue  # values above 88.7 are common: only a contrast with the other rows says something
            if key in ("zero", "vanish", "exp"):
                ok = np.array_equal(bad_rows, rows) and not (mism_rows & ~rows).any()
            else:  # an overflow may give zeros (x / inf) as well as inf or NaN
                ok = np.array_equal(mism_rows, rows) and (not need_bad or bad_rows.any())
                ok = ok and not (bad_rows & ~rows).any()
            if ok:
                results.append(((g.rank, order), key, g, rows, phrase))
    if not results:
        return None
    best = min(r[0] for r in results)
    same = [r for r in results if r[0] == best]
    if len({tuple(np.flatnonzero(r[3])) for r in same}) > 1:
        return None  # two inputs, equally close to the output's shape, point at different rows
    _, key, g, rows, phrase = same[0]
    others = [r[2].name for r in same[1:] if r[2].name != g.name]
    if others:
        phrase = {k: v + f" (the same rows for {' and '.join(others)})" for k, v in phrase.items()}
    return key, g, rows, phrase


def _row_labels(ctx: Ctx, g: _Grouping, rows: np.ndarray) -> list:
    idx = np.flatnonzero(rows)
    if g.scalar:
        lead = ctx.args.arrays[g.name].shape
    else:
        lead = ctx.shape[:-1]
    if not lead:
        return []
    return [tuple(int(v) for v in np.unravel_index(int(i), lead)) for i in idx]


def _kinds(values: np.ndarray) -> str:
    nan = bool(np.isnan(values).any())
    inf = bool(np.isinf(values).any())
    return "NaN and inf" if nan and inf else ("NaN" if nan else "inf")


def nonfinite(ctx: Ctx) -> Diagnosis | None:
    """NaN or inf exactly where an input explains it (zero rows, overflowing squares or exp), or in a pattern
    of the output (whole rows or columns, a triangle) with every other value right."""
    bad = ~np.isfinite(ctx.a)
    kinds = _kinds(ctx.a[bad])
    count = int(bad.sum())
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if ctx.ndim else ()
    hit = _explain_by_inputs(ctx, bad, need_bad=True)
    if hit is not None:
        key, g, rows, phrase = hit
        labels = _row_labels(ctx, g, rows)
        if labels and not rows.all():
            where = (f"{kinds} in every row {phrase['where']} ({plural('row', len(labels))} "
                     f"{listing(labels)}), and nowhere else")
        elif labels:
            where = f"{kinds} in every row, and {phrase['all']}"
        else:  # one row: the whole output
            where = (f"Every value is {kinds}" if bad.all() else f"{kinds} in the output") + f", and {phrase['one']}"
        if key == "zero" and g.scalar:
            msg = (f"{where}: something computed from that 0 there divides by zero or takes log(0). Is "
                   f"something that keeps a denominator (or a log's argument) away from zero missing?")
        elif key in ("zero", "vanish"):
            why = ("0/0 happens there" if key == "zero" else "a division by zero happens there")
            msg = (f"{where}: {why}. Is something that keeps a denominator away from "
                   f"zero missing, or outside the square root?")
        elif key == "square":
            msg = (f"{where}: squaring such values overflows float32 (largest value "
                   f"{sci(_F32_MAX)}) and the inf spreads. Scaling the values down before squaring "
                   f"(or a formula that never squares them) keeps them finite.")
        else:
            msg = (f"{where}: exp of such values overflows float32 and inf/inf gives "
                   f"NaN. Subtracting the largest value before exp keeps it finite.")
        return Diagnosis(ids.NONFINITE, msg)

    if bad.all():
        return Diagnosis(ids.NONFINITE, f"Every one of the {ctx.n} values is {kinds}, none is finite: something "
                                      f"produces {kinds} early (a 0/0, an overflow, a log of 0 or of a "
                                      f"negative number) and it spreads to the whole output.")
    if not np.array_equal(bad, ctx.mism):
        return None  # finite values are wrong too: NaN is not the whole story
    head = f"{count} of {ctx.n} values are {kinds} (the first at index {index_text(first)})"
    pattern = _output_pattern(ctx, bad)
    if pattern is None:
        return None
    return Diagnosis(ids.NONFINITE, f"{head}: {pattern}, and every other value is right. {_pattern_hint(pattern)}")


def _output_pattern(ctx: Ctx, bad: np.ndarray) -> str | None:
    nd = ctx.ndim
    if nd >= 2:
        rows = bad.reshape(-1, ctx.shape[-1])
        if np.all(rows.all(axis=1) | ~rows.any(axis=1)):
            lead = ctx.shape[:-1]
            labels = [tuple(int(v) for v in np.unravel_index(int(i), lead)) for i in np.flatnonzero(rows.all(axis=1))]
            return f"they fill whole {plural('row', len(labels))} {listing(labels)}"
        cols = np.moveaxis(bad, -1, 0).reshape(ctx.shape[-1], -1)
        if np.all(cols.all(axis=1) | ~cols.any(axis=1)):
            labels = list(np.flatnonzero(cols.all(axis=1)))
            return f"they fill whole {plural('column', len(labels))} {listing(labels)} (along the last axis)"
        if ctx.shape[-1] == ctx.shape[-2] >= 2:
            t = ctx.shape[-1]
            for mask, words in ((np.triu(np.ones((t, t), bool), 1), "exactly above the diagonal (where j > i)"),
                                (np.tril(np.ones((t, t), bool), -1), "exactly below the diagonal (where j < i)"),
                                (np.eye(t, dtype=bool), "exactly on the diagonal (where j == i)")):
                if np.array_equal(bad, np.broadcast_to(mask, ctx.shape)):
                    return f"they lie {words}"
    return None


def _pattern_hint(pattern: str) -> str:
    if "diagonal" in pattern:
        return ("Look at what happens at those positions, e.g. to values a mask hides (0 * inf and inf - inf "
                "give NaN).")
    return "A quantity computed per row (a sum, a norm, a maximum) is probably 0, inf or NaN there."


def overflow_rows(ctx: Ctx) -> Found | None:
    """Finite but wrong exactly in the rows where squaring the input overflows float32."""
    hit = _explain_by_inputs(ctx, np.zeros_like(ctx.mism), need_bad=False)
    if hit is None or hit[0] != "square":
        return None
    key, g, rows, phrase = hit
    labels = _row_labels(ctx, g, rows)
    where = f"rows {listing(labels)}" if len(labels) > 1 else (f"row {listing(labels)}" if labels else "the output")
    msg = (f"Only the rows {phrase['where']} differ ({where}): squaring such values overflows float32 (largest value "
           f"{sci(_F32_MAX)}), which turns them to 0 or inf. Scaling the values down before squaring keeps "
           f"them in range.")
    return Found(Diagnosis(ids.OVERFLOW, msg))
