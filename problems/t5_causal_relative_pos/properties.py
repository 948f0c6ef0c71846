"""Reference-free properties of a causal bucket matrix, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (T, T) shape and returns None when the
property holds, or a sentence saying where it breaks.
"""

import numpy as np


def depends_only_on_offset(args, out):
    """The bucket depends only on the offset j - i (every diagonal is constant)."""
    T = out.shape[0]
    for i in range(1, T):
        for j in range(1, T):
            if out[i, j] != out[i - 1, j - 1]:
                return (f"cells (i={i - 1}, j={j - 1}) and (i={i}, j={j}) have the same offset j - i = {j - i} "
                        f"but different buckets ({out[i - 1, j - 1]:g} and {out[i, j]:g}); the bucket must depend "
                        "only on j - i")
    return None


def future_is_zero(args, out):
    """Keys at or after the query (j >= i, the upper triangle and the diagonal) are all in bucket 0."""
    bad = np.triu(out != 0)
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        where = "on the diagonal" if i == j else "a key after the query"
        return (f"cell (i={i}, j={j}), {where}, holds {out[i, j]:g}; in the causal scheme every key at or after "
                "the query has distance 0 and belongs in bucket 0")
    return None


def within_range(args, out):
    """Every bucket is an integer in [0, num_buckets)."""
    nb = args["num_buckets"]
    bad = (out < 0) | (out >= nb) | (out != np.floor(out))
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        return f"cell (i={i}, j={j}) holds {out[i, j]:g}, outside the integers 0 .. {nb - 1}"
    return None


def grows_with_distance(args, out):
    """Going back into the past (i - j = 1, 2, ...), the bucket never decreases."""
    column = out[:, 0]  # (T,): row i, key 0, so the distance into the past is i
    drops = np.nonzero(np.diff(column) < 0)[0]
    if drops.size:
        d = int(drops[0]) + 1
        return (f"a key {d} positions back (cell i={d}, j=0) gets bucket {column[d]:g}, lower than the bucket "
                f"{column[d - 1]:g} of a key {d - 1} back; buckets must not decrease with distance into the past")
    return None


PROPERTIES = [future_is_zero, depends_only_on_offset, within_range, grows_with_distance]
