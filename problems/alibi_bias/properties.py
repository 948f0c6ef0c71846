"""Reference-free properties of an ALiBi bias, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (H, T, T) shape and returns None when the
property holds, or a sentence saying where it breaks. They read the bias as ALiBi defines it, m_h (j - i):
each head's matrix depends on the offset j - i alone (constant along every diagonal, 0 on the main one), it
is that offset times one number per head on both sides of the diagonal, and those numbers, read as the step
from one key to the next left of the diagonal (where every form in circulation agrees), follow the slopes
rule. The other forms of the bias (m j, m (j - (T - 1)), -m |j - i|, the lower triangle alone) and the
tempting slope formulas are named where the output is one of them.
"""

import numpy as np

ATOL = RTOL = 2e-5  # two cells of a float32 bias: each within the tolerance (1e-5) of the exact value
SLOPE_RTOL = 2e-5  # a slope read from float32 cells (a mean of steps) is off by far less; bfloat16's by 1e-4 to 4e-3
BF16_STEP = 2.0 ** -8  # bfloat16's unit roundoff: its relative rounding error is at most this


def _close(a, b, atol=ATOL, rtol=RTOL):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.abs(a - b) <= atol + rtol * np.maximum(np.abs(a), np.abs(b))


def rule(num_heads):
    """(H,) float64: the slopes of ofirpress's get_slopes in closed form, and c, the largest power of two <= H."""
    c = 1 << (num_heads.bit_length() - 1)
    first = [2.0 ** (-8.0 * (h + 1) / c) for h in range(c)]
    extra = [2.0 ** (-4.0 * (2 * j + 1) / c) for j in range(num_heads - c)]
    return np.array(first + extra), c


def _formula(h, c):
    return f"2 ** (-8 * {h + 1} / {c})" if h < c else f"2 ** (-4 * {2 * (h - c) + 1} / {c})"


def _nonfinite(out):
    bad = np.argwhere(~np.isfinite(out))
    if not bad.size:
        return None
    h, i, j = (int(x) for x in bad[0])
    return (f"head {h}, cell ({i}, {j}) holds {out[h, i, j]}; every value is a slope times a whole number "
            "below T, always finite")


def _row_form(m):
    """Words for a (T, T) head whose rows are all the same (the bias of one key row, broadcast), or None."""
    T = m.shape[0]
    if T < 2 or not np.all(_close(m, m[:1])) or np.all(_close(m, 0.0)):
        return None
    if np.all(_close(m[:, -1], 0.0)):
        return ("every row is the same, 0 in the last column: m (j - (T - 1)), measured from the last key "
                "(Hugging Face MPT's form), which a causal softmax cannot tell from m (j - i) but this "
                "matrix can")
    if np.all(_close(m[:, 0], 0.0)):
        return ("every row is the same, 0 in the first column: m j, the key's position alone (the form of "
                "ofirpress's code and of BLOOM), which a causal softmax cannot tell from m (j - i) but this "
                "matrix can")
    return "every row is the same: the bias follows the key's position, not its distance from the query"


def depends_on_offset_only(args, out):
    """Each head's matrix is constant along every diagonal j - i = k, and 0 on the main one (k = 0)."""
    said = _nonfinite(out)
    if said:
        return said
    H, T, _ = out.shape
    for h in range(H):
        rows = _row_form(out[h])
        tail = f"; {rows}" if rows else ""
        diagonal = np.diagonal(out[h])
        off = np.flatnonzero(~_close(diagonal, 0.0))
        if off.size:
            i = int(off[0])
            return (f"head {h}'s diagonal cell ({i}, {i}) holds {diagonal[i]:.6g}; a query's own key is at "
                    f"distance 0, so its bias is 0{tail}")
        for k in range(-(T - 1), T):
            cells = np.diagonal(out[h], offset=k)  # cells (i, i + k), i from max(0, -k)
            bad = np.flatnonzero(~_close(cells, cells[0]))
            if bad.size:
                i0, i = max(0, -k), max(0, -k) + int(bad[0])
                return (f"in head {h}, cells ({i0}, {i0 + k}) and ({i}, {i + k}) are both at offset j - i = {k} "
                        f"but hold {cells[0]:.6g} and {cells[bad[0]]:.6g}; ALiBi's bias depends on the offset "
                        f"alone{tail}")
    return None


def linear_in_offset(args, out):
    """bias[h, i, j] = c_h (j - i) with one number c_h per head, on both sides of the diagonal."""
    H, T, _ = out.shape
    if T < 2 or _nonfinite(out):
        return None  # nothing to compare, or the offset property says what is wrong
    for h in range(H):
        rows = _row_form(out[h])
        if rows:
            return f"head {h} is not c (j - i) for any number c: {rows}"
    if depends_on_offset_only(args, out):
        return None  # not a function of the offset: the offset property says where
    ks = np.arange(-(T - 1), T)
    f = np.array([[out[h, max(0, -k), max(0, -k) + k] for k in ks] for h in range(H)], np.float64)  # (H, 2T - 1)
    below, above = ks < 0, ks > 0
    for h in range(H):
        c = -f[h, T - 2]  # the cell one step left of the diagonal holds -c
        line = c * ks
        if np.all(_close(f[h], line)):
            continue
        k = int(ks[np.flatnonzero(~_close(f[h], line))[0]])
        said = (f"in head {h}, the offset j - i = {k} holds {f[h, k + T - 1]:.6g}, but the cell one step left of "
                f"the diagonal holds {-c:.6g}, so c (j - i) gives {c * k:.6g}")
        if np.all(_close(f[h, below], line[below])) and np.all(_close(f[h, above], 0.0)):
            return (said + ": the bias is 0 everywhere above the diagonal, the lower triangle alone (what a "
                           "causal mask keeps); here it is c (j - i) on the whole grid, positive to the right "
                           "of the diagonal, and the mask is the attention layer's job")
        if np.all(_close(f[h], f[h, ::-1])) and np.all(_close(f[h, below], line[below])):
            return (said + ": the bias is symmetric about the diagonal, -c |j - i|, so keys after the query are "
                           "penalised like keys before it (the non-causal form of flash-attention and "
                           "x-transformers); c (j - i) is positive to the right of the diagonal")
        off_line = ks != 0
        worst = float(np.max(np.abs(f[h, off_line] - line[off_line]) / np.abs(line[off_line]))) if c else np.inf
        if worst <= 2 * BF16_STEP:
            return (said + f": off a straight line by up to {worst:.2g} of the value, the size of one rounding to "
                           "bfloat16 (8 significant bits): the bias is computed in reduced precision")
        return said
    return None


def slopes_rule(args, out):
    """The step from one key to the next, left of the diagonal, is head h's slope: positive, and as the rule
    gives it (c = 2 ** floor(log2 H); 2 ** (-8 (h + 1) / c) for h < c, then 2 ** (-4 (2j + 1) / c))."""
    H, T, _ = out.shape
    if T < 2 or _nonfinite(out):
        return None
    lower = np.tril(np.ones((T, T - 1), dtype=bool), -1)  # step (i, j) -> (i, j + 1) with j + 1 <= i
    steps = np.diff(out.astype(np.float64), axis=2)[:, lower]  # (H, steps left of the diagonal)
    read = steps.mean(axis=1)  # (H,)
    want, c = rule(H)
    if np.all(_close(read, want, atol=0.0, rtol=SLOPE_RTOL)):
        return None
    h = int(np.flatnonzero(~_close(read, want, atol=0.0, rtol=SLOPE_RTOL))[0])
    said = (f"head {h}'s slope, read as the step from one key to the next left of the diagonal, is "
            f"{read[h]:.6g}; the rule gives {want[h]:.6g} = {_formula(h, c)} (c = {c}, the largest power of two "
            f"not above {H} heads)")

    def fits(slopes):
        return np.all(_close(read, slopes, atol=0.0, rtol=SLOPE_RTOL))

    if np.all(read < 0) and fits(-want):
        return (said + "; every slope is the right one negated: the bias grows with the distance to earlier keys "
                       "instead of falling, the sign flipped (m (i - j) where ALiBi has m (j - i))")
    p = 1 << (H - 1).bit_length()  # the next power of two at or above H
    k = np.arange(1, max(H, p) + 1, dtype=np.float64)
    named = [
        (2.0 ** (-8.0 * k[:H] / H), f"these are 2 ** (-8 (h + 1) / {H}) for every head: the power-of-two formula "
                                    f"over all the heads, where the rule takes it over the first c = {c} only"),
        (2.0 ** (-8.0 * k[:p] / p)[:H], f"these are the first {H} slopes of the {p}-head sequence "
                                        f"2 ** (-8 (h + 1) / {p}): the next power of two, not the one below"),
        (np.sort(want)[::-1], "these are the right slopes sorted from steepest to flattest; the rule appends the "
                              "heads past c after the first c, unsorted (the 'jump' is intended)"),
        (want[::-1], "these are the right slopes in reverse head order"),
    ]
    for slopes, words in named:
        if not np.array_equal(slopes, want) and fits(slopes):
            return f"{said}; {words}"
    if np.all(read > 0) and np.all(np.abs(read / want - 1.0) <= 2 * BF16_STEP):
        worst = float(np.max(np.abs(read / want - 1.0)))
        return (said + f"; every slope is within {worst:.2g} of the rule's, the size of a rounding to bfloat16 "
                       "(8 significant bits): the slopes or the bias are computed in reduced precision")
    first_ok = fits(np.concatenate([want[:c], read[c:]]))
    if not first_ok and np.all(_close(read[:c], 2.0 ** (-8.0 * np.arange(c) / c), atol=0.0, rtol=SLOPE_RTOL)):
        return (said + f"; the first {c} heads have 2 ** (-8 h / {c}), head 0 slope 1: the exponent counts heads "
                       "from 0, where the rule's sequence starts one step in, at 2 ** (-8 / c)")
    if first_ok and H > c:
        repeated = 2.0 ** (-8.0 * (np.arange(H - c) + 1) / c)
        if np.all(_close(read[c:], repeated, atol=0.0, rtol=SLOPE_RTOL)):
            return (said + f"; the heads past c = {c} repeat the first heads' slopes: they are every other slope "
                           f"of the {2 * c}-head sequence taken from its second, where the rule takes them from "
                           "its first, 2 ** (-4 (2j + 1) / c)")
        return said + f"; the first {c} heads are right, the heads past them are not"
    return said


PROPERTIES = [depends_on_offset_only, linear_in_offset, slopes_rule]
