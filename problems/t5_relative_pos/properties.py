"""Reference-free properties of a bucket matrix, checked on a failing output to say what is off.

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


def within_range(args, out):
    """Every bucket is an integer in [0, num_buckets)."""
    nb = args["num_buckets"]
    bad = (out < 0) | (out >= nb) | (out != np.floor(out))
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        return f"cell (i={i}, j={j}) holds {out[i, j]:g}, outside the integers 0 .. {nb - 1}"
    return None


def grows_with_distance(args, out):
    """Within each direction, the bucket never decreases as |j - i| grows."""
    T = out.shape[0]
    for name, row in (("key after query (j > i)", out[0, 1:]), ("key before query (j < i)", out[T - 1, :T - 1][::-1])):
        drops = np.nonzero(np.diff(row) < 0)[0]
        if drops.size:
            d = int(drops[0]) + 1
            return (f"for {name}, distance {d + 1} gets bucket {row[d]:g}, lower than distance {d}'s bucket "
                    f"{row[d - 1]:g}; buckets must not decrease with distance")
    return None


PROPERTIES = [depends_only_on_offset, within_range, grows_with_distance]
