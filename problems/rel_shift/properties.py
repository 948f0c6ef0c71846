"""Reference-free properties of a relative shift, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (T, T) shape and returns None when the
property holds, or a sentence saying where it breaks. They locate each output value in x, which is
unambiguous on generated inputs (their values are all different); a value found twice in a row of x
is not used as evidence.
"""

import numpy as np


def _offset(c, T):
    return f"{c - (T - 1):+d}" if c != T - 1 else "0"


def _origin(x, value):
    """Where `value` sits in x, in words."""
    found = np.argwhere(x == value)
    T = x.shape[0]
    if found.size:
        r, c = (int(k) for k in found[0])
        return f"x[{r}, {c}], query {r}'s score at offset {_offset(c, T)}"
    if value == 0:
        return "a 0 that is nowhere in x, so most likely padding"
    return "a value that is nowhere in x"


def _column_in_row(row, value):
    """The one column of `row` holding `value`, or None (absent, or not unique)."""
    hits = np.flatnonzero(row == value)
    return int(hits[0]) if hits.size == 1 else None


def from_its_own_query(args, out):
    """Row i of the output holds only values from row i of x (query i's own scores)."""
    x = np.asarray(args["x"])
    T = out.shape[0]
    for i in range(T):
        for j in range(T):
            if not np.any(x[i] == out[i, j]):
                return (f"cell (i={i}, j={j}) holds {out[i, j]:g}, which is not in row {i} of x: it is "
                        f"{_origin(x, out[i, j])}; row i of the output must come from row i of x alone")
    return None


def diagonal_is_offset_zero(args, out):
    """The diagonal holds offset 0: out[i, i] = x[i, T - 1], the middle column of x."""
    x = np.asarray(args["x"])
    T = out.shape[0]
    for i in range(T):
        if out[i, i] != x[i, T - 1]:
            return (f"cell (i={i}, j={i}) holds {out[i, i]:g} ({_origin(x, out[i, i])}), but a key at the "
                    f"query's own position has offset 0, the middle column: x[{i}, {T - 1}] = {x[i, T - 1]:g}")
    return None


def left_to_right(args, out):
    """One key to the right is one offset up: out[i, j + 1] sits in x just right of out[i, j]."""
    x = np.asarray(args["x"])
    T = out.shape[0]
    for i in range(T):
        for j in range(T - 1):
            c = _column_in_row(x[i], out[i, j])
            after = _column_in_row(x[i], out[i, j + 1])
            if c is None or after is None or after == c + 1:
                continue
            return (f"in row {i}, cell j={j} holds x[{i}, {c}] (offset {_offset(c, T)}) and cell j={j + 1} "
                    f"holds x[{i}, {after}] (offset {_offset(after, T)}); moving one key to the right must "
                    "raise the offset by one, that is move one column to the right in x")
    return None


PROPERTIES = [from_its_own_query, diagonal_is_offset_zero, left_to_right]
