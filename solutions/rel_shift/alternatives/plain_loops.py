"""Correct: plain Python loops over every (query, key) pair."""

import numpy as np


def rel_shift(seed, x):
    """out[i, j] = x[i, j - i + T - 1], flattened to (T * T,) float32."""
    rows = [list(map(float, row)) for row in np.asarray(x)]
    T = len(rows)
    out = []
    for i in range(T):
        for j in range(T):
            offset = j - i  # key position minus query position
            out.append(rows[i][offset + T - 1])  # column c holds offset c - (T - 1)
    return np.array(out, dtype=np.float32)  # (T * T,)
