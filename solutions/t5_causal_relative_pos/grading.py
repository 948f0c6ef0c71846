"""Comparison hooks for t5_causal_relative_pos: where float rounding may legitimately move a bucket.

T5 buckets one direction of offsets with `nb` buckets ("buckets per direction": num_buckets for the
causal decoder scheme of this problem, num_buckets // 2 for the bidirectional encoder scheme, where
each sign gets half). With max_exact = nb // 2 and k = nb - max_exact log-spaced buckets, a distance
d >= max_exact lands in

    floor(max_exact + log(d / max_exact) / log(max_distance / max_exact) * k)

clamped to nb - 1. For some distances the value inside the floor is mathematically a whole number n,
for instance d = 8 with num_buckets = 8, max_distance = 16 (causal): 4 + log(2) / log(4) * 4 = 6.
Computed in floating point it may come out a hair below n, and a correct implementation then floors
to n - 1. At exactly these *boundary cells* the grader accepts either neighbour, clamp(n - 1) or
clamp(n). At every other cell the answer is exact.

Whether the value is a whole number is decided with integer arithmetic, never with a float tolerance.
With me = max_exact, md = max_distance and m = n - me, the value equals n exactly when
(d / me) ** k == (md / me) ** m, that is when d**k * me**m == md**m * me**k. A float64 estimate
proposes m; exact comparisons then settle the floor and the equality.

Two kinds of whole-number cells need no alternative and get none (NaN):
- d == max_exact (m = 0): log(1) is exactly 0 in IEEE arithmetic, so every implementation lands on
  max_exact itself.
- d >= max_distance (m >= k): both neighbours clamp to the same bucket, nb - 1.

`accept_also` is the hook the grader calls to compare. `borderline` is the one it calls to tell known
mistakes apart: the cells where the reference's log formula, or the formula of one of the known
mistakes (halved bucket counts, max_exact = num_buckets // 4, the log part scaled by max_exact), is a
whole number past its max_exact, clamped or not, so that a mistake computed in other floating-point
arithmetic may land on either side there. `exact_buckets` gives the exact answer for the whole matrix,
for tests that check the reference at every cell that is not a boundary cell.
"""

import math

import numpy as np


def log_floor(size, max_exact, num_log, max_distance):
    """floor(max_exact + log(size / max_exact) / log(max_distance / max_exact) * num_log), decided exactly.

    Args:
        size: int >= max_exact, a distance.
        max_exact: int >= 1, the first distance on the log scale.
        num_log: int >= 1, how many buckets the log scale spans from max_exact to max_distance.
        max_distance: int > max_exact.

    Returns:
        (n, whole): n, the floor before any clamp, and whole = True when the value inside the floor is
        exactly n.
    """
    d, me, k, md = int(size), int(max_exact), int(num_log), int(max_distance)
    if me < 1 or k < 1 or d < me or md <= me:
        raise ValueError(f"need 1 <= max_exact <= size, num_log >= 1 and max_distance > max_exact, "
                         f"got {d=}, {me=}, {k=}, {md=}")
    lhs = d**k  # the value is me + m or more  <=>  d**k * me**m >= md**m * me**k

    def at_least(m):
        return lhs * me**m >= md**m * me**k

    m = max(0, math.floor(k * math.log(d / me) / math.log(md / me)))  # float64 estimate
    while m > 0 and not at_least(m):
        m -= 1
    while at_least(m + 1):
        m += 1
    return me + m, lhs * me**m == md**m * me**k


def exact_log_floor(size, per_direction, max_distance):
    """T5's log-spaced bucket for one direction with `per_direction` buckets, before the clamp, exactly.

    Args:
        size: int >= per_direction // 2, a distance.
        per_direction: int >= 2, the buckets one direction has: num_buckets in the causal scheme,
            num_buckets // 2 in the bidirectional one.
        max_distance: int > per_direction // 2.

    Returns:
        (n, whole) as in `log_floor`, with max_exact = per_direction // 2 and
        num_log = per_direction - max_exact.
    """
    max_exact = per_direction // 2
    return log_floor(size, max_exact, per_direction - max_exact, max_distance)


def direction_table(T, per_direction, max_distance):
    """Per distance d in [0, T): the exact bucket of one direction, and the accepted alternative or None.

    Args:
        T: int >= 1, one more than the largest distance.
        per_direction: int >= 2, the buckets of the direction (see `exact_log_floor`).
        max_distance: int > per_direction // 2.

    Returns:
        (exact, other): two lists of length T; other[d] is the one other bucket accepted at distance d
        (a whole-number value that rounding may move down), None where there is none.
    """
    me, last = per_direction // 2, per_direction - 1
    exact, other = [], []
    for d in range(T):
        if d < me:
            exact.append(d)
            other.append(None)
            continue
        n, whole = exact_log_floor(d, per_direction, max_distance)
        exact.append(min(n, last))
        low = min(n - 1, last)
        other.append(low if whole and d > me and low != exact[-1] else None)
    return exact, other


def _distance(T):
    pos = np.arange(T)
    return np.maximum(pos[:, None] - pos[None, :], 0)  # (T, T): max(i - j, 0), how far back key j lies


def exact_buckets(T, num_buckets, max_distance):
    """The exact causal bucket matrix, computed with Python ints and exact boundary decisions.

    At a boundary cell this is the mathematically exact clamp(n), never clamp(n - 1).

    Args:
        T: int >= 1.
        num_buckets: int >= 2.
        max_distance: int > num_buckets // 2.

    Returns:
        (T * T,) float32, flattened row by row like the entry's output.
    """
    exact, _ = direction_table(T, num_buckets, max_distance)
    bucket = np.asarray(exact, dtype=np.int64)[_distance(T)]  # (T, T)
    return bucket.astype(np.float32).reshape(-1)  # (T * T,)


def boundary_mask(T, num_buckets, max_distance):
    """(T * T,) bool: True at the cells where two neighbouring buckets are both accepted."""
    _, other = direction_table(T, num_buckets, max_distance)
    has_other = np.array([o is not None for o in other], dtype=bool)
    return has_other[_distance(T)].reshape(-1)  # (T * T,)


def accept_also(args, expected):
    """The value accepted at each cell besides `expected`'s own, NaN where there is none.

    Args:
        args: the call's arguments, {"seed", "T", "num_buckets", "max_distance"}.
        expected: (T * T,) the reference's output for that call.

    Returns:
        (T * T,) float32: NaN everywhere except at boundary cells, where it holds the other of the
        two neighbours clamp(n - 1), clamp(n) from the one `expected` holds there; NaN also where
        `expected` holds neither.
    """
    T = int(args["T"])
    exact, other = direction_table(T, int(args["num_buckets"]), int(args["max_distance"]))
    dist = _distance(T)  # (T, T)
    high = np.asarray(exact, dtype=np.float64)[dist]  # (T, T)
    low = np.asarray([np.nan if o is None else o for o in other], dtype=np.float64)[dist]  # (T, T)
    got = np.asarray(expected, dtype=np.float64).reshape(T, T)
    alt = np.where(got == high, low, np.where(got == low, high, np.nan))  # NaN stays NaN
    return alt.astype(np.float32).reshape(-1)  # (T * T,)


def _log_scales(num_buckets):
    """(max_exact, num_log) of the reference's log formula and of the known mistakes' ones."""
    nb, half = num_buckets, num_buckets // 2
    scales = {
        (nb // 2, nb - nb // 2),  # the reference
        (half // 2, half - half // 2),  # halved counts (the bidirectional rule, with or without boost)
        (nb // 4, nb - nb // 4),  # max_exact = num_buckets // 4
        (nb // 2, nb // 2),  # log part scaled by max_exact
    }
    return sorted((me, k) for me, k in scales if me >= 1 and k >= 1)


def borderline(args):
    """Where a log formula, the reference's or a known mistake's, is exactly a whole number.

    Cells are taken by |i - j| on both sides of the diagonal, since some mistakes bucket keys after
    the query too.

    Args:
        args: the call's arguments, {"seed", "T", "num_buckets", "max_distance"}.

    Returns:
        (T * T,) bool, True at those cells.
    """
    T, num_buckets, max_distance = int(args["T"]), int(args["num_buckets"]), int(args["max_distance"])
    whole = np.zeros(T, dtype=bool)
    for me, k in _log_scales(num_buckets):
        if max_distance > me:
            whole |= [d > me and log_floor(d, me, k, max_distance)[1] for d in range(T)]
    pos = np.arange(T)
    return whole[np.abs(pos[:, None] - pos[None, :])].reshape(-1)  # (T * T,)
