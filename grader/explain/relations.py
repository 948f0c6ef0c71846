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

Ids: constant_factor, reduced_precision, transpose, reversed_axis, permuted_axis, shifted, wrong_order
(also for a flattening order), nonfinite, overflow (finite but wrong exactly where squaring an input
overflows float32), and residual_added / residual_missing (the expected output plus, or minus, an input
of the output's shape: a residual connection where none belongs, or none where one does).

Pure numpy; the arrays are small (a few thousand values), and every search is bounded.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from grader.core.verdict import Diagnosis

_F32 = np.finfo(np.float32)
_F32_EPS = float(_F32.eps)  # 1.19e-7
_F32_MAX = float(_F32.max)  # 3.40e38
_SQRT_F32_MAX = math.sqrt(_F32_MAX)  # 1.84e19: larger values overflow when squared
_LOG_F32_MAX = math.log(_F32_MAX)  # 88.72: exp of larger values overflows
_SLACK_ULPS = 8  # float32 rounding allowed on top of the tolerance, relative to the array's scale

# (name, unit roundoff, bits of precision)
_BF16 = ("bfloat16", 2.0 ** -8, 8)
_FP16 = ("float16", 2.0 ** -11, 11)
_FEW_ULPS = 8  # errors up to this many unit roundoffs (relative to the array's scale) count as rounding

_MAX_PAIRWISE = 4_000_000  # bound on slices x values compared when matching slices by content
_MAX_SHIFT = 3


def diagnose(expected: np.ndarray, actual: np.ndarray, args: dict, *, rtol: float, atol: float,
             exact: bool = False) -> Diagnosis | None:
    """The one relation that explains every value where ``actual`` differs from ``expected``, or None.

    ``expected`` and ``actual`` are the reference's and the learner's output in the output's natural
    shape (``expected`` finite, ``actual`` possibly not); ``args`` are the call's arguments (name ->
    Python int/float or numpy array), used to name factors and to locate non-finite values. Values are
    equal when ``|a - e| <= atol + rtol * |e|``, or exactly when ``exact``.
    """
    try:
        e_in = np.asarray(expected)
        a_in = np.asarray(actual)
    except (TypeError, ValueError):
        return None
    if e_in.shape != a_in.shape or e_in.size == 0:
        return None
    if not (_numeric(e_in) and _numeric(a_in)):
        return None
    with np.errstate(all="ignore"):
        e = e_in.astype(np.float64)
        a = a_in.astype(np.float64)
        if not np.isfinite(e).all():
            return None
        ctx = _Ctx(e, a, a_in.dtype, _arrays_and_ints(args), float(rtol), float(atol), bool(exact))
        if not ctx.mism.any():
            return None
        if not np.isfinite(a).all():
            return _nonfinite(ctx)
        found = []
        for check in (_transposed, _reversed, _shifted, _flatten_order, _permuted, _constant_factor,
                      _reduced_precision, _overflow_rows, _wrong_order, _input_added):
            f = check(ctx)
            if f is not None:
                found.append(f)
        return _choose(found)


# --------------------------------------------------------------------------------------------- common


def _numeric(x: np.ndarray) -> bool:
    return np.issubdtype(x.dtype, np.number) and not np.issubdtype(x.dtype, np.complexfloating)


@dataclass
class _Args:
    ints: dict  # name -> int
    arrays: dict  # name -> float64 ndarray (ndim >= 1)


def _arrays_and_ints(args) -> _Args:
    ints, arrays = {}, {}
    for name, v in dict(args or {}).items():
        if isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, (int, np.integer)):
            ints[str(name)] = int(v)
        elif isinstance(v, (np.ndarray, list, tuple)):
            try:
                arr = np.asarray(v)
            except (TypeError, ValueError):
                continue
            if arr.ndim >= 1 and arr.size and _numeric(arr):
                arrays[str(name)] = arr.astype(np.float64)
    return _Args(ints, arrays)


class _Ctx:
    """The two outputs in float64, the tolerance, and what mismatches."""

    def __init__(self, e, a, a_dtype, args: _Args, rtol, atol, exact):
        self.e, self.a, self.a_dtype, self.args = e, a, a_dtype, args
        self.rtol, self.atol, self.exact = rtol, atol, exact
        self.shape, self.ndim, self.n = e.shape, e.ndim, e.size
        self.scale = float(np.abs(e).max())
        self.slack = 0.0 if exact else _SLACK_ULPS * _F32_EPS * self.scale
        self.mism = ~(np.abs(a - e) <= atol + rtol * np.abs(e)) if not exact else ~(a == e)

    def close(self, x, ref):
        """Elementwise: ``x`` equals ``ref`` within the tolerance, loosened a little for float32 rounding."""
        if self.exact:
            return x == ref
        return np.abs(x - ref) <= self.atol + self.rtol * np.abs(ref) + self.slack

    def close_all(self, x, ref) -> bool:
        return bool(np.all(self.close(x, ref)))


@dataclass
class _Found:
    diagnosis: Diagnosis | None  # None: two readings of the same kind fit, so the kind says nothing
    axis: int | None = None
    wraps: bool = False  # a shift with wrap-around is also a permutation of that axis
    kind: str = ""  # "flatten" for the flattening-order reading of wrong_order, "multiset" for the general one


def _choose(found: list[_Found]) -> Diagnosis | None:
    """Exactly one relation, after dropping those a more specific one implies; else None."""
    specific = [f for f in found if f.kind != "multiset"]
    keep = []
    for f in found:
        if f.kind == "multiset" and specific:
            continue  # the same values in other places: implied by any positional reading
        if f.diagnosis is not None and f.diagnosis.id == "permuted_axis" and any(
                g.diagnosis is not None and g.axis == f.axis
                and (g.diagnosis.id == "reversed_axis" or (g.diagnosis.id == "shifted" and g.wraps)) for g in found):
            continue  # a reversal or a roll of that axis is the more specific reading of the permutation
        keep.append(f)
    if len(keep) != 1 or keep[0].diagnosis is None:
        return None
    return keep[0].diagnosis


def _input_added(ctx: _Ctx) -> _Found | None:
    """The expected output plus (or minus) an input of the same shape, everywhere, where that input is far
    from zero at several wrong values: a residual connection added inside the function, or one left out."""
    for name, x in ctx.args.arrays.items():
        if x.shape != ctx.shape:
            continue
        evidence = int(np.sum(ctx.mism & (np.abs(x) > ctx.atol + ctx.rtol * np.abs(ctx.e) + ctx.slack)))
        if evidence < 3:
            continue
        if ctx.close_all(ctx.a, ctx.e + x):
            return _Found(Diagnosis("residual_added", (
                f"Your output is the expected one plus the input {name}, at every position: a residual connection "
                f"({name} + ...) added where none belongs. This function returns what it computes alone; adding "
                f"{name} back is the job of whatever calls it.")))
        if ctx.close_all(ctx.a, ctx.e - x):
            return _Found(Diagnosis("residual_missing", (
                f"Your output is the expected one minus the input {name}, at every position: the residual "
                f"connection ({name} + ...) is missing. Add {name} to what the sublayer computes.")))
    return None


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _sci(x: float) -> str:
    """1.8e19, 3.9e-3: two significant digits, exponent without padding."""
    if x == 0 or 1e-2 <= abs(x) < 1e3:
        return f"{x:.2g}"
    m, ex = f"{x:.1e}".split("e")
    return f"{m}e{int(ex)}"


def _pct(frac: float) -> str:
    p = 100.0 * frac
    return f"{p:.0f}%" if p >= 1 else f"{p:.1g}%"


def _idx(t) -> str:
    if isinstance(t, tuple):
        return str(t[0]) if len(t) == 1 else "(" + ", ".join(str(i) for i in t) + ")"
    return str(t)


def listing(items, limit: int = 6) -> str:
    """``items`` as a reader lists them: "1, 2 and 3" (after ``limit`` of them, "and N more")."""
    items = [_idx(i) for i in items]
    if len(items) == 1:
        return items[0]
    if len(items) <= limit:
        return ", ".join(items[:-1]) + " and " + items[-1]
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"


def _plural(word: str, k: int) -> str:
    return word if k == 1 else word + "s"


def _subscript(ndim: int, exprs: dict) -> str:
    """``[:, j-1]``-style subscript: the given axes get their expression, the others ``:``."""
    if ndim == 0:
        return ""
    parts = [exprs.get(ax, ":") for ax in range(ndim)]
    if ndim > 2:
        lead = 0
        while lead < ndim and parts[lead] == ":":
            lead += 1
        if lead >= 2:
            parts = ["..."] + parts[lead:]
    return "[" + ", ".join(parts) + "]"


def _axis_words(ndim: int, axis: int) -> tuple[str, str]:
    """(singular, plural) name of the slices along ``axis``."""
    if ndim >= 2 and axis == 0:
        return "row", "rows"
    if ndim == 2 and axis == 1:
        return "column", "columns"
    if ndim == 1:
        return "value", "values"
    return "slice", "slices"


# ------------------------------------------------------------------------------------------- position


def _transposed(ctx: _Ctx) -> _Found | None:
    hits = []
    for p, q in itertools.combinations(range(ctx.ndim), 2):
        if ctx.shape[p] == ctx.shape[q] >= 2 and ctx.close_all(ctx.a, np.swapaxes(ctx.e, p, q)):
            hits.append((p, q))
    if not hits:
        return None
    if len(hits) > 1:
        return _Found(None)
    p, q = hits[0]
    nd = ctx.ndim
    lhs = _subscript(nd, {p: "i", q: "j"})
    rhs = _subscript(nd, {p: "j", q: "i"})
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
    return _Found(Diagnosis("transpose", msg))


def _reversed(ctx: _Ctx) -> _Found | None:
    hits = [ax for ax in range(ctx.ndim)
            if ctx.shape[ax] >= 2 and ctx.close_all(ctx.a, np.flip(ctx.e, ax))]
    if not hits:
        return None
    if len(hits) > 1:
        return _Found(None)
    ax = hits[0]
    n = ctx.shape[ax]
    one, many = _axis_words(ctx.ndim, ax)
    lhs = _subscript(ctx.ndim, {ax: "i"})
    rhs = _subscript(ctx.ndim, {ax: f"{n - 1}-i"})
    head = f"The {many} come in reverse order (reversed along axis {ax})"
    msg = (f"{head}: actual{lhs} == expected{rhs}, so {one} 0 holds what {one} {n - 1} should. "
           f"Check the direction of an index, an arange or a sort along that axis.")
    return _Found(Diagnosis("reversed_axis", msg), axis=ax)


def _take(x, lo, hi, axis):
    sl = [slice(None)] * x.ndim
    sl[axis] = slice(lo, hi)
    return x[tuple(sl)]


def _shifted(ctx: _Ctx) -> _Found | None:
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
    one, many = _axis_words(ctx.ndim, ax)
    sign = "-" if step > 0 else "+"
    lhs = _subscript(ctx.ndim, {ax: "i"})
    rhs = _subscript(ctx.ndim, {ax: f"i{sign}{k}"})
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
        also = (f" (for this output that is the same as actual{_subscript(ctx.ndim, {ax2: 'i'})} == "
                f"expected{_subscript(ctx.ndim, {ax2: f'i{sign2}{k2}'})})")
    where = "" if wraps else " wherever both exist"
    msg = (f"The output is shifted by {k} {places} along axis {ax} ({many} moved {direction}): "
           f"actual{lhs} == expected{rhs}{where}{also}{edge}. Look for an index or an offset that is "
           f"off by {k}.")
    return _Found(Diagnosis("shifted", msg), axis=ax, wraps=wraps)


def _edge_fill(ctx: _Ctx, edge_a, edge_e) -> tuple[str, str] | None:
    """What the slices the shift leaves over hold, when it is evident: (singular verb, plural verb)."""
    if edge_a.size == 0:
        return None
    if ctx.close_all(edge_a, np.zeros_like(edge_a)) and not ctx.close_all(edge_e, np.zeros_like(edge_e)):
        return "holds zeros", "hold zeros"
    if ctx.close_all(edge_a, edge_e):
        return "keeps its expected values", "keep their expected values"
    v = float(edge_a.flat[0])
    if edge_a.size > 1 and ctx.close_all(edge_a, np.full_like(edge_a, v)):
        return f"holds {_fmt(v)} throughout", f"hold {_fmt(v)} throughout"
    return None


def _flatten_order(ctx: _Ctx) -> _Found | None:
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
        return _Found(None)
    perm = hits[0]
    if perm == tuple(reversed(range(ctx.ndim))):
        how = ("flattened column by column: your flat output is expected.T.reshape(-1) "
               "(expected.reshape(-1, order='F'))")
    else:
        how = f"flattened in another axis order: your flat output is expected.transpose{perm}.reshape(-1)"
    msg = (f"The values are right but {how}. The output is flattened row by row, as .reshape(-1) does; "
           f"a transpose before it (or order='F') changes the order.")
    return _Found(Diagnosis("wrong_order", msg), kind="flatten")


def _permuted(ctx: _Ctx) -> _Found | None:
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
        return _Found(None)
    ax, perm = hits[0]
    one, many = _axis_words(ctx.ndim, ax)
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
    return _Found(Diagnosis("permuted_axis", msg), axis=ax)


def _wrong_order(ctx: _Ctx) -> _Found | None:
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
    return _Found(Diagnosis("wrong_order", msg), kind="multiset")


# ------------------------------------------------------------------------------------------- values


def _named_sizes(args: _Args) -> list[tuple[int, int, list[str]]]:
    """Integers a factor may be built from: (n, tier, names), tier 0 for the integer arguments, 1 for
    their quotients and the arrays' axis sizes, 2 for products, 3 for small integers with no name."""
    tiers: list[dict[int, list[str]]] = [{}, {}, {}]
    kinds_named: set = set()  # (tier, value, kind): one quotient and one array size per number is plenty

    def add(tier, v, name, kind="arg"):
        if v >= 2 and (kind == "arg" or (tier, v, kind) not in kinds_named):
            kinds_named.add((tier, v, kind))
            lst = tiers[tier].setdefault(int(v), [])
            if name not in lst:
                lst.append(name)

    ints = {k: v for k, v in args.ints.items() if k != "seed"}  # a seed is no size
    for k, v in ints.items():
        add(0, v, k)
    for (ka, va), (kb, vb) in itertools.permutations(ints.items(), 2):
        if vb >= 2 and va > vb and va % vb == 0:
            add(1, va // vb, f"{ka} // {kb}", "quotient")
    for k, arr in args.arrays.items():
        for ax, s in enumerate(arr.shape):
            label = f"len({k})" if arr.ndim == 1 else (f"{k}.shape[-1]" if ax == arr.ndim - 1 else f"{k}.shape[{ax}]")
            add(1, s, label, "size")
    for (ka, va), (kb, vb) in itertools.combinations(ints.items(), 2):
        if va >= 2 and vb >= 2 and va * vb <= 1 << 16:
            add(2, va * vb, f"{ka} * {kb}", "product")
    out, seen = [], set()
    for tier, names in enumerate(tiers):
        for v, ns in names.items():
            if v not in seen:
                seen.add(v)
                out.append((v, tier, ns))
    out += [(v, 3, []) for v in range(2, 17) if v not in seen]
    return out


def _readable_forms(c: float, args: _Args, rel: float) -> list[tuple[float, str, int, int, list[str]]]:
    """Forms n, 1/n, sqrt(n), 1/sqrt(n) equal to ``c`` (> 0) within ``rel``, best first:
    (value, text, n, tier, names)."""
    forms = []
    for n, tier, names in _named_sizes(args):
        r = math.sqrt(n)
        for rank, (val, txt) in enumerate(((n, f"{n}"), (1.0 / n, f"1/{n}"), (r, f"sqrt({n})"),
                                           (1.0 / r, f"1/sqrt({n})"))):
            if abs(c / val - 1.0) <= rel:
                forms.append((tier, rank, val, txt, n, names))
    forms.sort(key=lambda f: (f[0], f[1]))
    return [(val, txt, n, tier, names) for tier, _, val, txt, n, names in forms]


def _rows(x: np.ndarray) -> np.ndarray:
    """(rows, values) view over the last axis (one row for 0-D and 1-D)."""
    return x.reshape(1, -1) if x.ndim <= 1 else x.reshape(-1, x.shape[-1])


def _constant_factor(ctx: _Ctx) -> _Found | None:
    ev, av = ctx.e.ravel(), ctx.a.ravel()
    denom = float(np.dot(ev, ev))
    if denom == 0.0:
        return None
    c = float(np.dot(ev, av)) / denom
    if not math.isfinite(c) or c == 0.0:
        return None
    zero = np.abs(ev) <= ctx.atol + ctx.slack
    if 2 * int(zero.sum()) > ctx.n:
        return None  # most expected values are 0: no factor can be seen on them

    def holds(cc: float) -> bool:
        ref = cc * ev
        if ctx.exact:
            tol = 1e-9 * max(1.0, float(np.abs(ref).max()))
        else:
            tol = ctx.atol + ctx.rtol * np.abs(ref) + _SLACK_ULPS * _F32_EPS * float(np.abs(ref).max())
        if not np.all(np.abs(av - ref) <= tol):
            return False
        # values that tell cc from 1 on their own: the fit is not carried by one value, and it is seen
        # at two sizes at least (on a single size any function is a factor); a negative factor is seen
        # on both signs (on one sign abs() or a sign mistake is a factor of -1 too)
        confirming = np.abs(ref - ev) > 2 * (tol + ctx.atol + ctx.rtol * np.abs(ev) + ctx.slack)
        if int(confirming.sum()) < 3:
            return False
        mags = np.sort(np.abs(ev[confirming]))
        if mags[-1] <= mags[0] * 1.01:
            return False
        return cc > 0 or bool((ev[confirming] > 0).any() and (ev[confirming] < 0).any())

    offset = float(np.mean(av - ev))
    if ctx.close_all(av, ev + offset):
        return None  # a constant offset explains it as well: no factor can be told apart

    rel = max(1e-4, 10 * ctx.rtol)
    if c < 0 and abs(c + 1.0) <= rel and holds(-1.0):
        return _Found(Diagnosis("constant_factor", _factor_message(-1.0, [])))
    # one row, or rows that are copies: a per-row quantity (a norm, a sum) would look like a global
    # factor, so only a factor that an argument names is evidence enough there
    independent = _rows_independent(ctx)
    forms = _readable_forms(abs(c), ctx.args, rel)
    for val, *_ in forms:
        cc = math.copysign(val, c)
        if holds(cc):
            same = [f for f in forms if abs(f[0] / val - 1.0) <= 1e-9]  # the forms of that very value
            if not independent and not any(f[3] <= 1 for f in same):
                return None
            return _Found(Diagnosis("constant_factor", _factor_message(cc, same)))
    if ctx.exact or abs(c - 1.0) < 0.01 or not independent or not holds(c):
        return None
    msg = (f"Every value is {_fmt(c)} times the expected one, the same ratio in every row: something "
           f"scales the whole output by a constant it should not (or misses one it should apply).")
    return _Found(Diagnosis("constant_factor", msg))


def _rows_independent(ctx: _Ctx) -> bool:
    """Whether two rows of the expected output are not multiples of each other (beyond the tolerance)."""
    rows = _rows(ctx.e)
    norms = np.sqrt(np.sum(rows * rows, axis=1))
    if rows.shape[0] < 2 or norms.max() == 0:
        return False
    u = rows[int(np.argmax(norms))] / norms.max()
    resid = rows - np.outer(rows @ u, u)
    return bool(np.any(np.abs(resid) > 10 * (ctx.atol + ctx.rtol * np.abs(rows) + ctx.slack)))


def _factor_message(c: float, forms) -> str:
    """``forms``: the readable forms of |c| (value, text, n, tier, names), best first."""
    if c == -1.0:
        return ("Every value has the opposite sign of the expected one (actual == -expected): the sign is "
                "flipped somewhere, e.g. a subtraction the wrong way round or a missing minus.")
    absc = _fmt(abs(c))
    named = [(t, n, tier, ns) for _, t, n, tier, ns in forms if ns]
    if named:
        # two readings at most: the arguments themselves, their quotients and the arrays' sizes first;
        # products only when nothing better names the number
        best = [f for f in named if f[2] <= 1] or named
        parts = [ns_text if t == f"{n}" else f"{t}, and {n} = {ns_text}"
                 for t, n, tier, ns in best[:2]
                 for ns_text in [" = ".join(ns[:3])]]
        why = f" ({absc} = " + "; or ".join(parts) + ")"
    elif forms and forms[0][1] != f"{forms[0][2]}":
        why = f" ({absc} = {forms[0][1]})"
    else:
        why = ""
    sign = "; the sign is flipped too" if c < 0 else ""
    return f"Every value is {_fmt(c)} times the expected one{why}{sign}: a scale factor is missing or extra."


def _bits_f32(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def _representable(x64: np.ndarray, fmt) -> np.ndarray:
    x32 = x64.astype(np.float32)
    if fmt is _BF16:
        return (_bits_f32(x32) & 0xFFFF) == 0
    with np.errstate(all="ignore"):
        back = x32.astype(np.float16).astype(np.float32)
    return (back == x32) & np.isfinite(back)


def _reduced_precision(ctx: _Ctx) -> _Found | None:
    if ctx.exact or ctx.n < 2:
        return None
    e, a = ctx.e, ctx.a
    # relative error, against the row's scale near zero (rows may differ in scale by orders of magnitude)
    row_rms = np.sqrt(np.mean(_rows(e) ** 2, axis=1, keepdims=True))
    scale = np.maximum(np.abs(_rows(e)), row_rms).reshape(e.shape)
    err = np.abs(a - e)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(scale > 0, err / np.where(scale > 0, scale, 1.0), np.where(err > 0, np.inf, 0.0))
    worst = float(r.max())
    nonzero = e != 0
    if not nonzero.any():
        return None
    spread = float(np.mean(r[nonzero] > 1e-5))  # exact zeros stay exact zeros in any precision

    # the signature of "cast to a short format, compute, cast back": every value fits the format, and
    # values that need more than 3 bits of mantissa fit it only by chance (2**-16 each for bfloat16)
    if ctx.a_dtype == np.float32:
        for fmt in (_BF16, _FP16):
            if worst > _FEW_ULPS * fmt[1] or not _representable(a, fmt).all():
                continue
            informative = ((_bits_f32(a.astype(np.float32)) & 0x000F0000) != 0) if fmt is _BF16 \
                else ~_representable(a, _BF16)
            off_format = nonzero & ~_representable(e, fmt)
            if int(informative.sum()) < 2 or int((off_format & ctx.mism).sum()) < 2:
                continue
            if 2 * int(off_format.sum()) <= int(nonzero.sum()):
                continue  # most expected values fit the format too: no signature
            name, u, bits = fmt
            msg = (f"Every value you return is exactly a {name} number ({bits} bits of mantissa) and the "
                   f"expected ones are not, with relative errors up to {_sci(worst)} (one rounding to {name} "
                   f"moves a value by up to {_sci(u)}): the result was computed in {name} and cast back at "
                   f"the end. Work in float32 throughout.")
            return _Found(Diagnosis("reduced_precision", msg))

    # errors everywhere, of the size rounding makes, of both signs, not a per-row rescaling
    if int(ctx.mism.sum()) < 8 or spread < 0.5:
        return None
    med = float(np.median(r[nonzero]))
    # a few roundings leave most values within a unit roundoff or two; larger typical errors are not rounding
    if worst <= _FEW_ULPS * _FP16[1] and 2e-5 < med <= _FP16[1]:
        fmt = _FP16
    elif worst <= _FEW_ULPS * _BF16[1] and 1e-4 < med <= 2 * _BF16[1]:
        fmt = _BF16
    else:
        return None
    m = ctx.mism & (e != 0)
    if int(m.sum()) < 8:
        return None
    up = float(np.mean(np.sign(a[m] - e[m]) * np.sign(e[m]) > 0))
    if not 0.15 <= up <= 0.85:
        return None  # one-sided: a systematic change, not rounding
    if _per_row_affine_explains(e, a):
        return None  # a rescaling or shift per row (a wrong constant), not rounding
    name, u, bits = fmt
    msg = (f"Relative errors up to {_sci(worst)}, the size of rounding to {name} ({bits} bits of "
           f"mantissa), across {_pct(spread)} of the values: part of the computation runs in reduced "
           f"precision; work in float32 throughout.")
    return _Found(Diagnosis("reduced_precision", msg))


def _per_row_affine_explains(e: np.ndarray, a: np.ndarray) -> bool:
    """True when, on rows of at least 4 values, a per-row ``a = alpha * e + beta`` leaves under 1% of the
    error energy: the error is a per-row rescaling or shift (a wrong constant), which rounding is not."""
    E, A = _rows(e), _rows(a)
    if E.shape[1] < 4:
        return False
    de, da = E - E.mean(axis=1, keepdims=True), A - A.mean(axis=1, keepdims=True)
    var = np.sum(de * de, axis=1, keepdims=True)
    alpha = np.divide(np.sum(de * da, axis=1, keepdims=True), var, out=np.zeros_like(var), where=var > 0)
    resid = da - alpha * de
    d = A - E
    err = float(np.sum(d * d))
    return err > 0 and float(np.sum(resid * resid)) < 0.01 * err


# ---------------------------------------------------------------------------------------- locations


@dataclass
class _Grouping:
    name: str
    rank: int  # 0: same shape as the output; 1: the output's leading axes; 2: same leading axes
    x_rows: np.ndarray  # (G, m): the input's row for each group
    scalar: bool  # one input value per group


def _groupings(ctx: _Ctx) -> list[_Grouping]:
    out = []
    s_out = ctx.shape
    for name, x in ctx.args.arrays.items():
        if x.shape == s_out:
            out.append(_Grouping(name, 0, _rows(x), False))
        elif 1 <= x.ndim < len(s_out) and s_out[:x.ndim] == x.shape:
            out.append(_Grouping(name, 1, x.reshape(-1, 1), True))
        elif x.ndim >= 2 and len(s_out) >= 2 and x.shape[:-1] == s_out[:-1]:
            out.append(_Grouping(name, 2, _rows(x), False))
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
            pred = f"has values beyond {_sci(_SQRT_F32_MAX)} in size"
        else:
            pred = f"has squares that add up past float32's largest value ({_sci(_F32_MAX)})"
        pats.append((2, "square", sq_over, phrases(pred)))
    if not g.scalar:  # one value per row (an id, a length) is not what goes through exp
        pats.append((3, "exp", exp_over, phrases(f"has values above {_LOG_F32_MAX:.1f}")))
    return [p for p in pats if p[2].any()]


def _explain_by_inputs(ctx: _Ctx, bad: np.ndarray, need_bad: bool):
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


def _row_labels(ctx: _Ctx, g: _Grouping, rows: np.ndarray) -> list:
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


def _nonfinite(ctx: _Ctx) -> Diagnosis | None:
    bad = ~np.isfinite(ctx.a)
    kinds = _kinds(ctx.a[bad])
    count = int(bad.sum())
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if ctx.ndim else ()
    hit = _explain_by_inputs(ctx, bad, need_bad=True)
    if hit is not None:
        key, g, rows, phrase = hit
        labels = _row_labels(ctx, g, rows)
        if labels and not rows.all():
            where = (f"{kinds} in every row {phrase['where']} ({_plural('row', len(labels))} "
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
                   f"{_sci(_F32_MAX)}) and the inf spreads. Scaling the values down before squaring "
                   f"(or a formula that never squares them) keeps them finite.")
        else:
            msg = (f"{where}: exp of such values overflows float32 and inf/inf gives "
                   f"NaN. Subtracting the largest value before exp keeps it finite.")
        return Diagnosis("nonfinite", msg)

    if bad.all():
        return Diagnosis("nonfinite", f"Every one of the {ctx.n} values is {kinds}, none is finite: something "
                                      f"produces {kinds} early (a 0/0, an overflow, a log of 0 or of a "
                                      f"negative number) and it spreads to the whole output.")
    if not np.array_equal(bad, ctx.mism):
        return None  # finite values are wrong too: NaN is not the whole story
    head = f"{count} of {ctx.n} values are {kinds} (the first at index {_idx(first)})"
    pattern = _output_pattern(ctx, bad)
    if pattern is None:
        return None
    return Diagnosis("nonfinite", f"{head}: {pattern}, and every other value is right. {_pattern_hint(pattern)}")


def _output_pattern(ctx: _Ctx, bad: np.ndarray) -> str | None:
    nd = ctx.ndim
    if nd >= 2:
        rows = bad.reshape(-1, ctx.shape[-1])
        if np.all(rows.all(axis=1) | ~rows.any(axis=1)):
            lead = ctx.shape[:-1]
            labels = [tuple(int(v) for v in np.unravel_index(int(i), lead)) for i in np.flatnonzero(rows.all(axis=1))]
            return f"they fill whole {_plural('row', len(labels))} {listing(labels)}"
        cols = np.moveaxis(bad, -1, 0).reshape(ctx.shape[-1], -1)
        if np.all(cols.all(axis=1) | ~cols.any(axis=1)):
            labels = list(np.flatnonzero(cols.all(axis=1)))
            return f"they fill whole {_plural('column', len(labels))} {listing(labels)} (along the last axis)"
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


def _overflow_rows(ctx: _Ctx) -> _Found | None:
    """Finite but wrong exactly in the rows where squaring the input overflows float32."""
    hit = _explain_by_inputs(ctx, np.zeros_like(ctx.mism), need_bad=False)
    if hit is None or hit[0] != "square":
        return None
    key, g, rows, phrase = hit
    labels = _row_labels(ctx, g, rows)
    where = f"rows {listing(labels)}" if len(labels) > 1 else (f"row {listing(labels)}" if labels else "the output")
    msg = (f"Only the rows {phrase['where']} differ ({where}): squaring such values overflows float32 (largest value "
           f"{_sci(_F32_MAX)}), which turns them to 0 or inf. Scaling the values down before squaring keeps "
           f"them in range.")
    return _Found(Diagnosis("overflow", msg))
