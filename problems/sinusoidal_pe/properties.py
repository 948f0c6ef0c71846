"""Reference-free properties of a sinusoid table, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (T, d_model) shape and returns None when the
property holds, or a sentence saying where it breaks. They read each (sine, cosine) pair as a point on
the unit circle: its angle is p * w_k, so from one row to the next it must turn by w_k, and row 0's
first pair (w_0 = 1 in every convention) says which position the table starts at.
"""

import math

import numpy as np

CIRCLE_TOL = 1e-3  # |s^2 + c^2 - 1| a float32 table stays far below
READABLE_TOL = 0.05  # pairs this close to the circle still give an angle worth reading
STEP_TOL = 1e-3  # radians: float32 angles below position 128 are off by less than 1e-5


def _wrap(angle):
    """Angles in radians brought into [-pi, pi)."""
    return (np.asarray(angle, dtype=np.float64) + math.pi) % (2 * math.pi) - math.pi


def _radius_error(out, layout):
    """|s^2 + c^2 - 1| for every pair of ``layout`` ("interleaved": columns 2k, 2k + 1; "halves": k, k + d/2)."""
    half = out.shape[1] // 2
    s, c = _columns(out, layout)
    if s.shape[1] != half or c.shape[1] != half:
        return np.full((out.shape[0], max(half, 1)), np.inf)
    with np.errstate(all="ignore"):
        return np.abs(s.astype(np.float64) ** 2 + c.astype(np.float64) ** 2 - 1.0)


def _columns(out, layout):
    half = out.shape[1] // 2
    if layout == "interleaved":
        return out[:, 0:2 * half:2], out[:, 1:2 * half:2]
    return out[:, :half], out[:, half:2 * half]


def _layout(out, tol):
    """The layout whose pairs are all within ``tol`` of the unit circle: the paper's first, else None."""
    for layout in ("interleaved", "halves"):
        if np.all(_radius_error(out, layout) <= tol):
            return layout
    return None


def _pair_words(layout, k, half):
    return f"columns {2 * k} and {2 * k + 1}" if layout == "interleaved" else f"columns {k} and {k + half}"


def pairs_on_unit_circle(args, out):
    """Each row's columns 2k and 2k + 1 are the sine and the cosine of one angle: their squares sum to 1."""
    T, d = out.shape
    if d % 2:
        return f"the table has {d} columns, an odd number: it cannot be made of sine-cosine pairs"
    bad = np.argwhere(~np.isfinite(out))
    if bad.size:
        t, j = (int(i) for i in bad[0])
        return f"row {t}, column {j} holds {out[t, j]}; every value is the sine or the cosine of a finite angle"
    error = _radius_error(out, "interleaved")
    if np.all(error <= CIRCLE_TOL):
        return None
    t, k = (int(i) for i in np.argwhere(error > CIRCLE_TOL)[0])
    s, c = float(out[t, 2 * k]), float(out[t, 2 * k + 1])
    said = (f"in row {t}, columns {2 * k} and {2 * k + 1} hold {s:.6g} and {c:.6g}, whose squares sum to "
            f"{s * s + c * c:.6g}, not 1")
    if np.all(_radius_error(out, "halves") <= CIRCLE_TOL):
        return (said + f"; columns k and k + {d // 2} are sine-cosine pairs in every row instead: the table is "
                "laid out as [sin | cos] halves, where the paper puts each cosine right after its sine")
    return said + "; a sine and the cosine of the same angle always sum to 1 when squared"


def constant_angular_step(args, out):
    """From one row to the next, the angle of pair k turns by w_k = 10000 ** (-2k / d_model) (w_0 = 1 rad)."""
    T, d = out.shape
    if T < 2 or d < 2 or d % 2 or not np.isfinite(out).all():
        return None  # nothing to compare, or the unit-circle check says what is wrong
    layout = _layout(out, READABLE_TOL)
    if layout is None:
        return ("no angle can be read from the rows: their column pairs (2k, 2k + 1) are not the sine and the cosine "
                "of one angle, nor are columns k and k + d_model/2 (see the unit-circle property)")
    half = d // 2
    s, c = _columns(out, layout)
    theta = np.arctan2(s.astype(np.float64), c.astype(np.float64))  # (T, d/2)
    steps = _wrap(np.diff(theta, axis=0))  # (T - 1, d/2)
    k = np.arange(half, dtype=np.float64)
    last = args["offset"] + T - 1  # the largest position: float32 angle errors grow with it

    def fits(freq):
        tol = STEP_TOL + 4e-7 * np.abs(freq) * last
        return np.all(np.abs(_wrap(steps - freq[None, :])) <= tol[None, :])

    paper = 10000.0 ** (-2.0 * k / d)
    where = "" if layout == "interleaved" else ", reading the columns as [sin | cos] halves,"
    if fits(paper):
        return None
    wrong = np.abs(_wrap(steps - paper[None, :])) > STEP_TOL
    t, kk = (int(i) for i in np.argwhere(wrong)[0])
    should = f"w_{kk} = 10000 ** (-{2 * kk}/{d}) = {paper[kk]:.6g}" if kk else "w_0 = 1"
    said = (f"pair {kk} ({_pair_words(layout, kk, half)}){where} turns by {steps[t, kk]:.6g} rad from row {t} to "
            f"row {t + 1}; it should turn by {should}")
    spread = np.ptp(steps, axis=0)
    named = [
        (-paper, "every pair turns backwards by its own frequency: the sine and the cosine have swapped places"),
        (10000.0 ** (-k / d), "these are the frequencies 10000 ** (-k / d_model): the exponent's factor 2 is missing"),
        (10000.0 ** (-k / max(half - 1, 1)),
         "these are the frequencies 10000 ** (-k / (d_model/2 - 1)): tensor2tensor's spacing, not the paper's"),
        (10000.0 ** (2.0 * k / d), "these are the frequencies 10000 ** (+2k / d_model): the paper divides the "
                                   "position by 10000 ** (2k / d_model), and this multiplies by it"),
    ]
    for freq, words in named:
        if fits(freq):
            return f"{said}; {words}"
    if T > 2 and np.any(spread > STEP_TOL):
        kw = int(np.argmax(spread))
        return (f"{said}; pair {kw}'s step is not even the same from row to row (it varies by {spread[kw]:.3g} rad), as "
                "when the angles are rounded (bfloat16, say) or the positions are not consecutive")
    return said


def starts_at_offset(args, out):
    """Row 0 is position offset: its first pair is (sin(offset), cos(offset)), whatever the frequencies."""
    T, d = out.shape
    if d < 2 or d % 2 or not np.isfinite(out[0]).all():
        return None
    offset = args["offset"]
    partner = d // 2 if _layout(out, CIRCLE_TOL) == "halves" and d > 2 else 1
    s, c = float(out[0, 0]), float(out[0, partner])

    def at(p, tol=CIRCLE_TOL):
        return abs(s - math.sin(p)) <= tol and abs(c - math.cos(p)) <= tol

    if at(offset):
        return None
    said = (f"row 0 starts with {s:.6g} (column 0) and {c:.6g} (column {partner}); position offset = {offset} "
            f"starts with sin({offset}) = {math.sin(offset):.6g} and cos({offset}) = {math.cos(offset):.6g}")
    if abs(s - math.cos(offset)) <= CIRCLE_TOL and abs(c - math.sin(offset)) <= CIRCLE_TOL:
        return said + ": the sine and the cosine have swapped places"
    found = [p for p in range(0, offset + T + 2) if at(p)]
    if found:
        p = found[0]
        why = {0: " (the offset left out)", offset + 1: " (positions counted from 1)"}.get(p, "")
        return said + f": row 0 is the encoding of position {p}{why}"
    return said


PROPERTIES = [pairs_on_unit_circle, constant_angular_step, starts_at_offset]
