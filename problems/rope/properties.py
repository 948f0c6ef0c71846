"""Reference-free properties of a RoPE output, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (T, H, d) shape and returns None when the property
holds, or a sentence saying where it breaks. They read the output as RoPE defines it: each pair of features of
x (k and k + d/2 half-split, 2k and 2k + 1 interleaved) turned through an angle, so every pair keeps its length
and the angle can be read back from x and the output; row t's angle for pair k is (offset + t) * theta_k with
theta_k = base ** (-2k / d), so row 0 is turned by offset * theta_k (by nothing at offset 0) and each row by
theta_k more than the one before; and two equal rows of x turned at two positions have a dot product that
depends only on how far apart they are. Pairs of x too short to give an angle are left out of the readings.
"""

import math

import numpy as np

NORM_ATOL = 1e-3  # |length after - length before| of a pair: float32 stays below 1e-6; bfloat16 cos and sin ~4e-3
NORM_RTOL = 1e-3
READABLE = 0.05  # a pair of x shorter than this gives no angle worth reading
ANGLE_TOL = 1e-3  # radians: a float32 angle below position 128 is off by less than 1e-5
DOT_ATOL = 1e-5  # |q.k - q'.k'| for the same distance: float32 stays below 1e-6 of |x|^2
DOT_RTOL = 1e-3


def _wrap(angle):
    """Angles in radians brought into [-pi, pi)."""
    return (np.asarray(angle, dtype=np.float64) + math.pi) % (2 * math.pi) - math.pi


def _pairs(a, interleaved):
    """The two features of every pair, (..., d/2) each: (2k, 2k + 1) interleaved, (k, k + d/2) half-split."""
    d = a.shape[-1]
    if interleaved:
        return a[..., 0::2], a[..., 1::2]
    return a[..., : d // 2], a[..., d // 2:]


def _features(interleaved, k, d):
    return f"features {2 * k} and {2 * k + 1}" if interleaved else f"features {k} and {k + d // 2}"


def _layout(interleaved):
    return ("interleaved pairs (2k, 2k + 1)" if interleaved else "half-split pairs (k, k + d/2)")


def _inputs(args, out):
    """x and the output as float64 (T, H, d) arrays, or None where the output cannot be read as pairs."""
    x = np.asarray(args["x"], dtype=np.float64)
    out = np.asarray(out, dtype=np.float64)
    if out.shape != x.shape or x.ndim != 3 or x.shape[-1] % 2:
        return None
    return x, out


def _lengths_kept(x, out, interleaved):
    """(T, H, d/2) bool: whether each pair of the output is as long as x's."""
    before = np.hypot(*_pairs(x, interleaved))
    after = np.hypot(*_pairs(out, interleaved))
    return np.abs(after - before) <= NORM_ATOL + NORM_RTOL * before


def _turns(x, out, interleaved):
    """(T, H, d/2) angles in [-pi, pi) that turn x's pairs into the output's, and where they can be read
    (x's pair long enough, its length kept)."""
    a, b = _pairs(x, interleaved)
    c, s = _pairs(out, interleaved)
    angle = np.arctan2(a * s - b * c, a * c + b * s)  # the angle from (a, b) to (c, s)
    readable = (np.hypot(a, b) >= READABLE) & _lengths_kept(x, out, interleaved)
    return angle, readable


def frequencies(d, base):
    """(d/2,) float64: theta_k = base ** (-2k / d)."""
    return float(base) ** (-2.0 * np.arange(d // 2) / d)


def _nonfinite(out):
    bad = np.argwhere(~np.isfinite(out))
    if not bad.size:
        return None
    t, h, j = (int(i) for i in bad[0])
    return (f"row {t}, head {h}, feature {j} holds {out[t, h, j]}; every value is a sum of x's values times a "
            "cosine and a sine, always finite")


def _rotated(x, offset, base, interleaved, table_interleaved):
    """x turned RoPE's way with the partner of one layout and cos and sin laid out for another (the same one:
    the right rotation), in float64."""
    T, _, d = x.shape
    theta = np.outer(offset + np.arange(T), frequencies(d, base))  # (T, d/2)
    cos, sin = np.cos(theta), np.sin(theta)
    if table_interleaved:
        cos, sin = np.repeat(cos, 2, axis=-1), np.repeat(sin, 2, axis=-1)
    else:
        cos, sin = np.concatenate([cos, cos], axis=-1), np.concatenate([sin, sin], axis=-1)
    if interleaved:
        partner = np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)
    else:
        partner = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * cos[:, None, :] + partner * sin[:, None, :]


def pair_norms_kept(args, out):
    """A rotation keeps each pair's length: the output's pair k is as long as x's, in the flag's layout."""
    found = _inputs(args, out)
    if found is None:
        return None
    x, out = found
    said = _nonfinite(out)
    if said:
        return said
    interleaved = bool(args["interleaved"])
    kept = _lengths_kept(x, out, interleaved)
    if kept.all():
        return None
    d = x.shape[-1]
    t, h, k = (int(i) for i in np.argwhere(~kept)[0])
    a, b = (p[t, h, k] for p in _pairs(x, interleaved))
    c, s = (p[t, h, k] for p in _pairs(out, interleaved))
    said = (f"in row {t}, head {h}, {_features(interleaved, k, d)} (pair {k} of the {_layout(interleaved)}) hold "
            f"{c:.6g} and {s:.6g}, of length {math.hypot(c, s):.6g}, where x's hold {a:.6g} and {b:.6g}, of length "
            f"{math.hypot(a, b):.6g}; a rotation keeps each pair's length")
    if d >= 4 and _lengths_kept(x, out, not interleaved).all():
        return (said + f"; the {_layout(not interleaved)} keep their lengths instead: you turned the pairs of the "
                       f"other layout, where interleaved = {str(interleaved).lower()} asks for the "
                       f"{_layout(interleaved)}")
    other = _rotated(x, args["offset"], args["base"], interleaved, table_interleaved=not interleaved)
    if d >= 4 and np.all(np.abs(other - out) <= 1e-4 + 1e-4 * np.abs(other)):
        table = "repeated pair by pair, c_0, c_0, c_1, .." if not interleaved else "in halves, [c_0 .. c_0 ..]"
        return (said + f"; your cos and sin are laid out {table}, for the other layout than your partner "
                       "features: the two features of a pair are turned by different angles, which is no rotation")
    worst = float(np.max(np.abs(np.hypot(*_pairs(out, interleaved)) - np.hypot(*_pairs(x, interleaved)))
                      / np.maximum(np.hypot(*_pairs(x, interleaved)), READABLE)))
    if worst <= 2 ** -7:
        return said + (f"; every length is within {worst:.2g} of x's, the size of a rounding to bfloat16 (8 "
                       "significant bits): the rotation is computed in reduced precision (cos and sin, or x itself, "
                       "rounded to bfloat16)")
    return said


def identity_at_position_zero(args, out):
    """Row 0 sits at position offset: it is x's row 0 turned by offset * theta_k, at offset 0 x's row 0 itself
    (the first pair, theta_0 = 1 whatever the base, turned by offset radians)."""
    found = _inputs(args, out)
    if found is None or not np.isfinite(out).all():
        return None
    x, out = found
    interleaved, offset = bool(args["interleaved"]), int(args["offset"])
    angle, readable = _turns(x[:1], out[:1], interleaved)
    if not _lengths_kept(x[:1], out[:1], interleaved).all():
        return None  # not a rotation: the pair lengths property says where
    heads = np.flatnonzero(readable[0, :, 0])  # the heads whose first pair gives an angle
    if not heads.size:
        return None
    first = angle[0, heads, 0]  # (heads,): the turn of pair 0 in row 0, which must be offset (mod 2 pi)

    def at(p):
        return bool(np.all(np.abs(_wrap(first - p)) <= ANGLE_TOL))

    if at(offset):
        return None
    h = int(heads[np.argmax(np.abs(_wrap(first - offset)))])
    d = x.shape[-1]
    said = (f"row 0 should sit at position offset = {offset}, its first pair ({_features(interleaved, 0, d)}, "
            f"theta_0 = 1 whatever the base) turned by {offset} rad"
            + (" (position 0: x's row 0 unchanged)" if offset == 0 else f" ({_wrap(offset):.6g} rad modulo 2 pi)")
            + f", but in head {h} it is turned by {_wrap(angle[0, h, 0]):.6g} rad")
    if offset > 0 and at(0):
        return said + ": row 0 is x's row 0 unchanged, as position 0, the offset left out"
    if at(offset + 1):
        return said + f": row 0 is turned as position {offset + 1}, positions counted from 1"
    if offset > 0 and at(-offset):
        return said + f": turned by -{offset} rad, backwards"
    return said


def relative_dot(args, out):
    """Where two rows of x are equal (the same head), the dot product of their outputs depends only on how far
    apart they are: q_m . k_n = f(x, m - n)."""
    found = _inputs(args, out)
    if found is None or not np.isfinite(out).all():
        return None
    x, out = found
    T, H, _ = x.shape
    for h in range(H):
        rows = x[:, h, :]
        for t in range(T):
            group = [s for s in range(t, T) if np.array_equal(rows[s], rows[t])]
            if len(group) < 3 or group[0] != t or any(np.array_equal(rows[s], rows[t]) for s in range(t)):
                continue  # each group of equal rows once, from its first row, when it holds two equal distances
            scale = float(rows[t] @ rows[t])
            seen = {}
            for i, m in enumerate(group):
                for n in group[:i]:
                    dot = float(out[m, h] @ out[n, h])
                    first = seen.setdefault(m - n, (m, n, dot))
                    if abs(dot - first[2]) > DOT_ATOL + DOT_RTOL * scale:
                        m0, n0, dot0 = first
                        return (f"in head {h}, x's rows {m0}, {n0}, {m} and {n} are equal, and rows {m0} and {n0} "
                                f"are {m - n} apart as rows {m} and {n} are, but the dot products of their outputs "
                                f"are {dot0:.6g} and {dot:.6g}; turned by RoPE, two copies of one vector have a dot "
                                "product that depends on their distance alone")
    return None


def angle_step(args, out):
    """From one row to the next, pair k turns by theta_k = base ** (-2k / d) more, counter-clockwise."""
    found = _inputs(args, out)
    if found is None or not np.isfinite(out).all():
        return None
    x, out = found
    T, H, d = x.shape
    interleaved, base = bool(args["interleaved"]), float(args["base"])
    if T < 2 or not _lengths_kept(x, out, interleaved).all():
        return None  # nothing to compare, or not a rotation (the pair lengths property says where)
    angle, readable = _turns(x, out, interleaved)
    both = readable[1:] & readable[:-1]  # (T - 1, H, d/2)
    if not both.any():
        return None
    steps = _wrap(angle[1:] - angle[:-1])  # (T - 1, H, d/2)
    last = int(args["offset"]) + T - 1  # the largest position: float32 angle errors grow with it
    theta = frequencies(d, base)

    def fits(freq):
        tol = ANGLE_TOL + 4e-7 * np.abs(freq) * last  # float32 angles are off by about 7.5e-8 of themselves
        if np.any(tol > 0.5):  # angles so large that float32 holds little of them: no step can be read
            return False
        return bool(np.all((np.abs(_wrap(steps - freq)) <= tol) | ~both))

    if fits(theta):
        return None
    wrong = both & (np.abs(_wrap(steps - theta)) > ANGLE_TOL)
    t, h, k = (int(i) for i in np.argwhere(wrong)[0])
    should = f"theta_{k} = {base:g} ** (-{2 * k}/{d}) = {theta[k]:.6g}" if k else "theta_0 = 1"
    said = (f"in head {h}, pair {k} ({_features(interleaved, k, d)}) turns by {steps[t, h, k]:.6g} rad from row {t} "
            f"to row {t + 1}; it should turn by {should} more at each position")
    named = [
        (-theta, "every pair turns backwards by its own frequency: the rotation's sign is flipped (the partner "
                 "(x2, -x1) where RoPE has (-x2, x1)), so each pair turns clockwise"),
        (base ** (-np.arange(d // 2) / d), f"these are the frequencies {base:g} ** (-k / {d}): the exponent's factor "
                                           "2 is missing"),
        (np.zeros(d // 2), "every row of a head is turned by the same angle: the positions do not advance along x's "
                           "first axis"),
        (base ** (-2.0 * np.arange(1, d // 2 + 1) / d), f"these are the frequencies {base:g} ** (-2(k + 1) / {d}), "
                                                       "each pair's the next one's: the exponent counts pairs from 1 "
                                                       "(the paper's theta_i has 2(i - 1) with i from 1)"),
        (base ** (2.0 * np.arange(d // 2) / d), f"these are the frequencies {base:g} ** (+2k / {d}), growing with k: "
                                                "the paper divides the position by base ** (2k / d), and this "
                                                "multiplies by it"),
    ]
    if base != 10000.0:
        named.append((frequencies(d, 10000.0), f"these are the frequencies of base 10000: base = {base:g} is ignored"))
    if base != math.floor(base):
        named.append((frequencies(d, math.floor(base)), f"these are the frequencies of base {math.floor(base)}: the "
                                                        f"base {base:g} is cut to a whole number"))
    for freq, words in named:
        if not fits(freq):
            continue
        if not freq.any() and H >= 2:  # no step along the positions: perhaps one along the heads
            heads = _wrap(angle[:, 1:] - angle[:, :-1])  # (T, H - 1, d/2): from head to head
            seen = readable[:, 1:] & readable[:, :-1]
            if seen.any() and np.all((np.abs(_wrap(heads - theta)) <= ANGLE_TOL) | ~seen):
                words += ("; they grow from one head to the next by theta_k instead: the positions are read off the "
                          "head axis (cos and sin broadcast along the heads)")
        return f"{said}; {words}"
    spread = np.array([np.ptp(steps[:, hh, kk][both[:, hh, kk]]) if both[:, hh, kk].sum() > 1 else 0.0
                       for hh in range(H) for kk in range(d // 2)])
    if spread.size and np.max(spread) > ANGLE_TOL:
        return (f"{said}; the steps are not even the same from row to row (they vary by up to {np.max(spread):.3g} "
                "rad), as when the angles are rounded (in bfloat16, say) or the positions are not consecutive")
    return said


PROPERTIES = [pair_norms_kept, identity_at_position_zero, relative_dot, angle_step]
