"""Reference-free properties of a relative position bias, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (1, H, q_len, k_len) shape and returns None
when the property holds, or a sentence saying where it breaks.
"""

import numpy as np


def all_finite(args, out):
    """Every value is a finite number (nn.Embed gives NaN for a bucket outside the table)."""
    bad = ~np.isfinite(out)
    if bad.any():
        _, h, i, j = (int(k) for k in np.argwhere(bad)[0])
        return (f"head {h}, cell (i={i}, j={j}) holds {out[0, h, i, j]:g}; a NaN there usually means a bucket "
                f"outside 0 .. {args['num_buckets'] - 1} was looked up in the table")
    return None


def depends_only_on_offset(args, out):
    """In each head the value depends only on the offset j - i (every diagonal is constant)."""
    _, H, q_len, k_len = out.shape
    for h in range(H):
        for i in range(1, q_len):
            for j in range(1, k_len):
                a, b = out[0, h, i - 1, j - 1], out[0, h, i, j]
                if not (a == b or (np.isnan(a) and np.isnan(b))):
                    return (f"head {h}: cells (i={i - 1}, j={j - 1}) and (i={i}, j={j}) have the same offset "
                            f"j - i = {j - i} but different values ({a:.6g} and {b:.6g}); the bias must depend "
                            "only on j - i")
    return None


def far_offsets_share_one_value(args, out):
    """In each head, all keys max_distance or more before the query share one value, and (bidirectional)
    so do all keys max_distance or more after it: that is what lets the table serve any length."""
    _, H, q_len, k_len = out.shape
    md = args["max_distance"]
    offset = np.arange(k_len)[None, :] - np.arange(q_len)[:, None]  # (q_len, k_len): j - i
    sides = [("before", offset <= -md)]
    if args["bidirectional"]:
        sides.append(("after", offset >= md))
    for h in range(H):
        for side, far in sides:
            values = out[0, h][far]
            if values.size >= 2 and not np.all(values == values[0]):
                cells = np.argwhere(far)
                first = tuple(int(x) for x in cells[0])
                other = tuple(int(x) for x in cells[np.nonzero(values != values[0])[0][0]])
                return (f"head {h}: the keys {md} (max_distance) or more positions {side} the query should all "
                        f"share the last bucket of their direction, but cell (i={first[0]}, j={first[1]}) holds "
                        f"{out[0, h][first]:.6g} and cell (i={other[0]}, j={other[1]}) holds "
                        f"{out[0, h][other]:.6g}")
    return None


def one_directional_ignores_later_keys(args, out):
    """One-directional: in each head, every key at or after the query (j >= i) shares one value, bucket 0's."""
    if args["bidirectional"]:
        return None
    _, H, q_len, k_len = out.shape
    later = np.arange(k_len)[None, :] >= np.arange(q_len)[:, None]  # (q_len, k_len)
    for h in range(H):
        values = out[0, h][later]
        if values.size >= 2 and not np.all(values == values[0]):
            cells = np.argwhere(later)
            other = tuple(int(x) for x in cells[np.nonzero(values != values[0])[0][0]])
            return (f"head {h}: with bidirectional=False every key at or after the query (j >= i) lands in "
                    f"bucket 0, so they share one value, but cell (i=0, j=0) holds {out[0, h, 0, 0]:.6g} and "
                    f"cell (i={other[0]}, j={other[1]}) holds {out[0, h][other]:.6g}")
    return None


PROPERTIES = [all_finite, depends_only_on_offset, far_offsets_share_one_value, one_directional_ignores_later_keys]
