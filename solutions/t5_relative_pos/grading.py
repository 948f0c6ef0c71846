"""Comparison hook for t5_relative_pos: where float rounding may legitimately move a bucket.

The log-spaced bucket of an offset of size d >= max_exact is

    floor(max_exact + log(d / max_exact) / log(max_distance / max_exact) * (nb_half - max_exact))

clamped to nb_half - 1 (nb_half = num_buckets // 2, max_exact = nb_half // 2). For some sizes the
value inside the floor is mathematically a whole number n, for instance d = 4 with num_buckets = 8,
max_distance = 8: 2 + log(2) / log(4) * 2 = 3. Computed in floating point, it may come out a hair
below n, and a correct implementation then floors to n - 1. At exactly these *boundary cells* the
grader accepts either neighbour, clamp(n - 1) or clamp(n) (plus the cell's half-boost). At every
other cell the answer is exact.

Whether the value is a whole number is decided with integer arithmetic, never with a float
tolerance. With me = max_exact, md = max_distance, k = nb_half - me and m = n - me, the value equals
n exactly when (d / me) ** k == (md / me) ** m, that is when d**k * me**m == md**m * me**k. A float64
estimate proposes m; exact comparisons then settle the floor and the equality.

Two kinds of whole-number cells need no alternative and get none (NaN):
- d == max_exact (m = 0): log(1) is exactly 0 in IEEE arithmetic, so every implementation lands on
  max_exact itself.
- d >= max_distance (m >= k): both neighbours clamp to the same bucket, nb_half - 1.

`accept_also` is the hook the grader calls to compare. `borderline` is the one it calls to tell
known mistakes apart: every cell whose value is a whole number (m >= 1), clamped or not, where a
mistake computed in other floating-point arithmetic may also land on either side. `exact_buckets` gives the exact answer for the whole
matrix, for tests that check the reference at every cell that is not a boundary cell.
"""

import math

import numpy as np


def _sizes(num_buckets, max_distance):
    nb_half = num_buckets // 2
    max_exact = nb_half // 2
    return nb_half, max_exact, nb_half - max_exact


def exact_log_floor(size, num_buckets, max_distance):
    """The log formula's floor and whether it is a whole number, decided exactly.

    Args:
        size: int >= max_exact, an offset size |j - i|.
        num_buckets: int, even and >= 4.
        max_distance: int > num_buckets / 4.

    Returns:
        (n, whole): n = floor(max_exact + log(size / max_exact) / log(max_distance / max_exact)
        * (nb_half - max_exact)) before any clamp, and whole = True when the value inside the
        floor is exactly n.
    """
    _, me, k = _sizes(num_buckets, max_distance)
    d, md = int(size), int(max_distance)
    if d < me or md <= me:
        raise ValueError(f"need max_exact <= size and max_distance > max_exact, got {d=}, {me=}, {md=}")
    lhs = d**k  # the value is me + m or more  <=>  d**k * me**m >= md**m * me**k

    def at_least(m):
        return lhs * me**m >= md**m * me**k

    m = max(0, math.floor(k * math.log(d / me) / math.log(md / me)))  # float64 estimate
    while m > 0 and not at_least(m):
        m -= 1
    while at_least(m + 1):
        m += 1
    return me + m, lhs * me**m == md**m * me**k


def _size_table(T, num_buckets, max_distance):
    """Per offset size d in [0, T): the exact bucket and the accepted alternative (or None)."""
    nb_half, me, _ = _sizes(num_buckets, max_distance)
    exact, other = [], []
    for d in range(T):
        if d < me:
            exact.append(d)
            other.append(None)
            continue
        n, whole = exact_log_floor(d, num_buckets, max_distance)
        exact.append(min(n, nb_half - 1))
        low = min(n - 1, nb_half - 1)
        other.append(low if whole and d > me and low != exact[-1] else None)
    return exact, other


def _offsets(T):
    pos = np.arange(T)
    return pos[None, :] - pos[:, None]  # (T, T): key j minus query i


def exact_buckets(T, num_buckets, max_distance):
    """The exact bucket matrix, computed with Python ints and exact boundary decisions.

    At a boundary cell this is the mathematically exact clamp(n), never clamp(n - 1).

    Args:
        T: int >= 1.
        num_buckets: int, even and >= 4.
        max_distance: int > num_buckets / 4.

    Returns:
        (T * T,) float32, flattened row by row like the entry's output.
    """
    nb_half = num_buckets // 2
    exact, _ = _size_table(T, num_buckets, max_distance)
    offset = _offsets(T)  # (T, T)
    bucket = np.asarray(exact, dtype=np.int64)[np.abs(offset)] + np.where(offset > 0, nb_half, 0)
    return bucket.astype(np.float32).reshape(-1)  # (T * T,)


def boundary_mask(T, num_buckets, max_distance):
    """(T * T,) bool: True at the cells where two neighbouring buckets are both accepted."""
    _, other = _size_table(T, num_buckets, max_distance)
    has_other = np.array([o is not None for o in other], dtype=bool)
    return has_other[np.abs(_offsets(T))].reshape(-1)


def accept_also(args, expected):
    """The value accepted at each cell besides `expected`'s own, NaN where there is none.

    Args:
        args: the call's arguments, {"seed", "T", "num_buckets", "max_distance"}.
        expected: (T * T,) the reference's output for that call.

    Returns:
        (T * T,) float32: NaN everywhere except at boundary cells, where it holds the other of the
        two neighbours clamp(n - 1), clamp(n) (half-boost added) from the one `expected` holds
        there; NaN also where `expected` holds neither.
    """
    T, num_buckets = int(args["T"]), int(args["num_buckets"])
    nb_half = num_buckets // 2
    exact, other = _size_table(T, num_buckets, int(args["max_distance"]))
    offset = _offsets(T)  # (T, T)
    size = np.abs(offset)
    boost = np.where(offset > 0, nb_half, 0)  # (T, T)
    high = np.asarray(exact, dtype=np.float64)[size] + boost  # (T, T)
    low = np.asarray([np.nan if o is None else o for o in other], dtype=np.float64)[size] + boost
    got = np.asarray(expected, dtype=np.float64).reshape(T, T)
    alt = np.where(got == high, low, np.where(got == low, high, np.nan))  # NaN stays NaN
    return alt.astype(np.float32).reshape(-1)  # (T * T,)


def borderline(args):
    """Where the log formula is exactly a whole number past max_exact, whatever the clamp makes of it.

    Args:
        args: the call's arguments, {"seed", "T", "num_buckets", "max_distance"}.

    Returns:
        (T * T,) bool, True at those cells.
    """
    T, num_buckets, max_distance = int(args["T"]), int(args["num_buckets"]), int(args["max_distance"])
    _, me, _ = _sizes(num_buckets, max_distance)
    whole = [d > me and exact_log_floor(d, num_buckets, max_distance)[1] for d in range(T)]
    return np.asarray(whole, dtype=bool)[np.abs(_offsets(T))].reshape(-1)
