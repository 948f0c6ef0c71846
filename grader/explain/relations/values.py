"""Relations of value: every value the expected one changed the same way (times a constant factor, rounded to
a shorter float, plus or minus an input)."""

from __future__ import annotations

import itertools
import math

import numpy as np

from grader.core.verdict import Diagnosis
from grader.explain import ids
from grader.explain.relations.common import F32_EPS, SLACK_ULPS, Args, Ctx, Found, as_rows
from grader.explain.relations.words import percent, sci, three_digits

# (name, unit roundoff, bits of precision)
_BF16 = ("bfloat16", 2.0 ** -8, 8)
_FP16 = ("float16", 2.0 ** -11, 11)
_FEW_ULPS = 8  # errors up to this many unit roundoffs (relative to the array's scale) count as rounding


def _named_sizes(args: Args) -> list[tuple[int, int, list[str]]]:
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


def _readable_forms(c: float, args: Args, rel: float) -> list[tuple[float, str, int, int, list[str]]]:
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


def constant_factor(ctx: Ctx) -> Found | None:
    """Every value the expected one times one constant, named after the arguments where they name it."""
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
            tol = ctx.atol + ctx.rtol * np.abs(ref) + SLACK_ULPS * F32_EPS * float(np.abs(ref).max())
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
        return Found(Diagnosis(ids.CONSTANT_FACTOR, _factor_message(-1.0, [])))
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
            return Found(Diagnosis(ids.CONSTANT_FACTOR, _factor_message(cc, same)))
    if ctx.exact or abs(c - 1.0) < 0.01 or not independent or not holds(c):
        return None
    msg = (f"Every value is {three_digits(c)} times the expected one, the same ratio in every row: something "
           f"scales the whole output by a constant it should not (or misses one it should apply).")
    return Found(Diagnosis(ids.CONSTANT_FACTOR, msg))


def _rows_independent(ctx: Ctx) -> bool:
    """Whether two rows of the expected output are not multiples of each other (beyond the tolerance)."""
    rows = as_rows(ctx.e)
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
    absc = three_digits(abs(c))
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
    return f"Every value is {three_digits(c)} times the expected one{why}{sign}: a scale factor is missing or extra."


def _bits_f32(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def _representable(x64: np.ndarray, fmt) -> np.ndarray:
    x32 = x64.astype(np.float32)
    if fmt is _BF16:
        return (_bits_f32(x32) & 0xFFFF) == 0
    with np.errstate(all="ignore"):
        back = x32.astype(np.float16).astype(np.float32)
    return (back == x32) & np.isfinite(back)


def reduced_precision(ctx: Ctx) -> Found | None:
    """Errors of the size rounding to bfloat16 or float16 makes: the values themselves in that format, or
    errors of both signs everywhere that no per-row rescaling explains."""
    if ctx.exact or ctx.n < 2:
        return None
    e, a = ctx.e, ctx.a
    # relative error, against the row's scale near zero (rows may differ in scale by orders of magnitude)
    row_rms = np.sqrt(np.mean(as_rows(e) ** 2, axis=1, keepdims=True))
    scale = np.maximum(np.abs(as_rows(e)), row_rms).reshape(e.shape)
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
                   f"expected ones are not, with relative errors up to {sci(worst)} (one rounding to {name} "
                   f"moves a value by up to {sci(u)}): the result was computed in {name} and cast back at "
                   f"the end. Work in float32 throughout.")
            return Found(Diagnosis(ids.REDUCED_PRECISION, msg))

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
    msg = (f"Relative errors up to {sci(worst)}, the size of rounding to {name} ({bits} bits of "
           f"mantissa), across {percent(spread)} of the values: part of the computation runs in reduced "
           f"precision; work in float32 throughout.")
    return Found(Diagnosis(ids.REDUCED_PRECISION, msg))


def _per_row_affine_explains(e: np.ndarray, a: np.ndarray) -> bool:
    """True when, on rows of at least 4 values, a per-row ``a = alpha * e + beta`` leaves under 1% of the
    error energy: the error is a per-row rescaling or shift (a wrong constant), which rounding is not."""
    E, A = as_rows(e), as_rows(a)
    if E.shape[1] < 4:
        return False
    de, da = E - E.mean(axis=1, keepdims=True), A - A.mean(axis=1, keepdims=True)
    var = np.sum(de * de, axis=1, keepdims=True)
    alpha = np.divide(np.sum(de * da, axis=1, keepdims=True), var, out=np.zeros_like(var), where=var > 0)
    resid = da - alpha * de
    d = A - E
    err = float(np.sum(d * d))
    return err > 0 and float(np.sum(resid * resid)) < 0.01 * err


def input_added(ctx: Ctx) -> Found | None:
    """The expected output plus (or minus) an input of the same shape, everywhere, where that input is far
    from zero at several wrong values: a residual connection added inside the function, or one left out."""
    for name, x in ctx.args.arrays.items():
        if x.shape != ctx.shape:
            continue
        evidence = int(np.sum(ctx.mism & (np.abs(x) > ctx.atol + ctx.rtol * np.abs(ctx.e) + ctx.slack)))
        if evidence < 3:
            continue
        if ctx.close_all(ctx.a, ctx.e + x):
            return Found(Diagnosis(ids.RESIDUAL_ADDED, (
                f"Your output is the expected one plus the input {name}, at every position: a residual connection "
                f"({name} + ...) added where none belongs. This function returns what it computes alone; adding "
                f"{name} back is the job of whatever calls it.")))
        if ctx.close_all(ctx.a, ctx.e - x):
            return Found(Diagnosis(ids.RESIDUAL_MISSING, (
                f"Your output is the expected one minus the input {name}, at every position: the residual "
                f"connection ({name} + ...) is missing. Add {name} to what the sublayer computes.")))
    return None

