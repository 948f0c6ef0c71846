"""Relations of position: the right values in other places (a transpose, a reversal, a shift or a permutation
of one axis, a flattening order, or no order at all)."""

from __future__ import annotations

import itertools

import numpy as np

from grader.core.verdict import Diagnosis
from grader.explain import ids
from grader.explain.relations.common import Ctx, Found
from grader.explain.relations.words import axis_words, subscript, three_digits

_MAX_PAIRWISE = 4_000_000  # bound on slices x values compared when matching slices by content
_MAX_SHIFT = 3


def transposed(ctx: Ctx) -> Found | None:
    """Two axes of the same size swapped, everywhere."""
    hits = []
    for p, q in itertools.combinations(range(ctx.ndim), 2):
        if ctx.shape[p] == ctx.shape[q] >= 2 and ctx.close_all(ctx.a, np.swapaxes(ctx.e, p, q)):
            hits.append((p, q))
    if not hits:
        return None
    if len(hits) > 1:
        return Found(None)
    p, q = hits[0]
    nd = ctx.ndim
    lhs = subscript(nd, {p: "i", q: "j"})
    rhs = subscript(nd, {p: "j", q: "i"})
    also = ""
    if nd == 2:
        what = "The output is the transpose of the expected one (rows and columns swapped)"
        also = " (flattening column by column, order='F', gives the same)"
    elif (p, q) == (nd - 2, nd - 1):
        what = "The last two axes are swapped (a transpose)"
    else:
        what = f"Axes {p} and {q} are swapped"
    msg = (f"{what}: actual{lhs} == expected{rhs} everywhere{also}. Check which index is which where the "
           f"output is built, and any transpose (or a missing one) before it is returned.")
    return Found(Diagnosis(ids.TRANSPOSE, msg))


def reversal(ctx: Ctx) -> Found | None:
    """One axis in reverse order, everywhere."""
    hits = [ax for ax in range(ctx.ndim)
            if ctx.shape[ax] >= 2 and ctx.close_all(ctx.a, np.flip(ctx.e, ax))]
    if not hits:
        return None
    if len(hits) > 1:
        return Found(None)
    ax = hits[0]
    n = ctx.shape[ax]
    one, many = axis_words(ctx.ndim, ax)
    lhs = subscript(ctx.ndim, {ax: "i"})
    rhs = subscript(ctx.ndim, {ax: f"{n - 1}-i"})
    head = f"The {many} come in reverse order (reversed along axis {ax})"
    msg = (f"{head}: actual{lhs} == expected{rhs}, so {one} 0 holds what {one} {n - 1} should. "
           f"Check the direction of an index, an arange or a sort along that axis.")
    return Found(Diagnosis(ids.REVERSED_AXIS, msg), axis=ax)


def _take(x, lo, hi, axis):
    sl = [slice(None)] * x.ndim
    sl[axis] = slice(lo, hi)
    return x[tuple(sl)]


def shifted(ctx: Ctx) -> Found | None:
    """One axis shifted by a few places (up to _MAX_SHIFT), wherever both the output and the shifted
    expected one have values; wrapped around or not, and what fills the edge where that is evident."""
    total = int(ctx.mism.sum())
    hits = []  # (k, axis, step, wraps, fill)
    for ax in range(ctx.ndim):
        n = ctx.shape[ax]
        if n < 3:
            continue
        for k in range(1, min(_MAX_SHIFT, max(1, n // 3)) + 1):
            for step in (k, -k):  # actual[i] == expected[i - step]
                if step > 0:
                    a_ov, e_ov, m_ov = (_take(ctx.a, k, n, ax), _take(ctx.e, 0, n - k, ax),
                                        _take(ctx.mism, k, n, ax))
                    edge_a, edge_e = _take(ctx.a, 0, k, ax), _take(ctx.e, 0, k, ax)
                else:
                    a_ov, e_ov, m_ov = (_take(ctx.a, 0, n - k, ax), _take(ctx.e, k, n, ax),
                                        _take(ctx.mism, 0, n - k, ax))
                    edge_a, edge_e = _take(ctx.a, n - k, n, ax), _take(ctx.e, n - k, n, ax)
                inside = int(m_ov.sum())
                if inside < 3 or 4 * inside < total or not ctx.close_all(a_ov, e_ov):
                    continue
                wraps = ctx.close_all(ctx.a, np.roll(ctx.e, step, axis=ax))
                hits.append((k, ax, step, wraps, _edge_fill(ctx, edge_a, edge_e)))
    if not hits:
        return None
    kmin = min(h[0] for h in hits)
    hits = [h for h in hits if h[0] == kmin]
    if len({h[3] for h in hits}) > 1:
        hits = [h for h in hits if h[3]]  # a roll explains the edge too: the more specific reading
    k, ax, step, wraps, fill = hits[0]
    one, many = axis_words(ctx.ndim, ax)
    sign = "-" if step > 0 else "+"
    lhs = subscript(ctx.ndim, {ax: "i"})
    rhs = subscript(ctx.ndim, {ax: f"i{sign}{k}"})
    towards = "higher" if step > 0 else "lower"
    if ctx.ndim >= 2 and ax == 0:
        direction = "down" if step > 0 else "up"
    elif ctx.ndim == 2 and ax == 1:
        direction = "right" if step > 0 else "left"
    else:
        direction = f"towards {towards} indices"
    places = "place" if k == 1 else "places"
    if wraps:
        edge = (f", with wrap-around: the {many} pushed past one end come back at the other "
                f"(what np.roll gives)")
    elif fill:
        side = "first" if step > 0 else "last"
        what = f"the {side} {one}" if k == 1 else f"the {side} {k} {many}"
        edge = f"; {what} {fill[0] if k == 1 else fill[1]}"
    else:
        edge = ""
    others = [h for h in hits[1:] if h[1] != ax]
    also = ""
    if others:
        k2, ax2, step2 = others[0][0], others[0][1], others[0][2]
        sign2 = "-" if step2 > 0 else "+"
        also = (f" (for this output that is the same as actual{subscript(ctx.ndim, {ax2: 'i'})} == "
                f"expected{subscript(ctx.ndim, {ax2: f'i{sign2}{k2}'})})")
    where = "" if wraps else " wherever both exist"
    msg = (f"The output is shifted by {k} {places} along axis {ax} ({many} moved {direction}): "
           f"actual{lhs} == expected{rhs}{where}{also}{edge}. Look for an index or an offset that is "
           f"off by {k}.")
    return Found(Diagnosis(ids.SHIFTED, msg), axis=ax, wraps=wraps)


def _edge_fill(ctx: Ctx, edge_a, edge_e) -> tuple[str, str] | None:
    """What the slices the shift leaves over hold, when it is evident: (singular verb, plural verb)."""
    if edge_a.size == 0:
        return None
    if ctx.close_all(edge_a, np.zeros_like(edge_a)) and not ctx.close_all(edge_e, np.zeros_like(edge_e)):
        return "holds zeros", "hold zeros"
    if ctx.close_all(edge_a, edge_e):
        return "keeps its expected values", "keep their expected values"
    v = float(edge_a.flat[0])
    if edge_a.size > 1 and ctx.close_all(edge_a, np.full_like(edge_a, v)):
        return f"holds {three_digits(v)} throughout", f"hold {three_digits(v)} throughout"
    return None


def flatten_order(ctx: Ctx) -> Found | None:
    """The expected values flattened in another axis order and put back in the output's shape."""
    if ctx.ndim < 2 or ctx.ndim > 4:
        return None
    hits = []
    for perm in itertools.permutations(range(ctx.ndim)):
        if perm == tuple(range(ctx.ndim)):
            continue
        t = np.transpose(ctx.e, perm)
        if t.shape == ctx.shape:
            continue  # that is a transpose of equal axes, not a flattening order
        if ctx.close_all(ctx.a, t.reshape(ctx.shape)):
            hits.append(perm)
    if not hits:
        return None
    if len(hits) > 1:
        return Found(None)
    perm = hits[0]
    if perm == tuple(reversed(range(ctx.ndim))):
        how = ("flattened column by column: your flat output is expected.T.reshape(-1) "
               "(expected.reshape(-1, order='F'))")
    else:
        how = f"flattened in another axis order: your flat output is expected.transpose{perm}.reshape(-1)"
    msg = (f"The values are right but {how}. The output is flattened row by row, as .reshape(-1) does; "
           f"a transpose before it (or order='F') changes the order.")
    return Found(Diagnosis(ids.WRONG_ORDER, msg), kind="flatten")


def permuted(ctx: Ctx) -> Found | None:
    """The slices along one axis right, in another order (matched by content)."""
    if ctx.ndim < 2:
        return None  # a permutation of single values is the right values in the wrong order
    hits = []
    for ax in range(ctx.ndim):
        n = ctx.shape[ax]
        if n < 2 or n * ctx.n > _MAX_PAIRWISE:
            continue
        A = np.moveaxis(ctx.a, ax, 0).reshape(n, -1)
        E = np.moveaxis(ctx.e, ax, 0).reshape(n, -1)
        match = np.empty((n, n), dtype=bool)
        for i in range(n):  # n x (n x m): bounded by _MAX_PAIRWISE
            match[i] = np.all(ctx.close(A[i][None, :], E), axis=1)
        perm = [-1] * n
        used = np.zeros(n, dtype=bool)
        for i in range(n):
            if match[i, i]:
                perm[i] = i
                used[i] = True
        ok = True
        for i in range(n):
            if perm[i] >= 0:
                continue
            free = np.flatnonzero(match[i] & ~used)
            if free.size == 0:
                ok = False
                break
            perm[i] = int(free[0])
            used[perm[i]] = True
        if ok and any(perm[i] != i for i in range(n)):
            hits.append((ax, perm))
    if not hits:
        return None
    if len(hits) > 1:
        return Found(None)
    ax, perm = hits[0]
    one, many = axis_words(ctx.ndim, ax)
    moved = [(i, p) for i, p in enumerate(perm) if p != i]
    swaps = [(i, p) for i, p in moved if i < p and perm[p] == i]
    if 2 * len(swaps) == len(moved) and len(swaps) <= 3:
        pairs = [f"{many} {i} and {p}" for i, p in swaps]
        how = pairs[0] + " are swapped" + "".join(f", and so are {q}" for q in pairs[1:])
    elif len(moved) <= 4:
        how = ", ".join(f"{one} {i} holds what {one} {p} should" for i, p in moved)
    else:
        head = ", ".join(f"{one} {i} holds {one} {p}" for i, p in moved[:3])
        how = f"{len(moved)} of {len(perm)} {many} are out of place ({head}, ...)"
    which = f"{many}, axis {ax}" if many != "slices" else f"along axis {ax}"
    msg = (f"The {many} are right but in another order ({which}): {how}. Check how that axis is indexed, "
           f"gathered or concatenated.")
    return Found(Diagnosis(ids.PERMUTED_AXIS, msg), axis=ax)


def wrong_order(ctx: Ctx) -> Found | None:
    """Exactly the expected values, most of them distinct, in other places: the general reading, which any
    positional one implies."""
    if ctx.n < 6 or int(ctx.mism.sum()) < 2:
        return None
    se, sa = np.sort(ctx.e, axis=None), np.sort(ctx.a, axis=None)
    if not ctx.close_all(sa, se):
        return None
    gaps = np.diff(se) > (0.0 if ctx.exact else ctx.atol + ctx.rtol * np.abs(se[1:]) + ctx.slack)
    distinct = 1 + int(gaps.sum())
    if 10 * distinct < 9 * ctx.n:
        return None  # repeated values: the same multiset says little
    k = int(ctx.mism.sum())
    msg = (f"Your output holds exactly the expected values, but {k} of {ctx.n} are in other positions: "
           f"the values are computed right and arranged wrong. Check the order of the axes before any "
           f"reshape or flatten, and how the result is assembled.")
    return Found(Diagnosis(ids.WRONG_ORDER, msg), kind="multiset")

