"""ALiBi bias in NumPy, filled cell by cell."""

import math

import numpy as np


def alibi_slopes(num_heads):
    n = 2 ** int(math.log2(num_heads))
    out = np.empty(num_heads)
    for h in range(num_heads):
        if h < n:
            out[h] = 0.5 ** (8 * (h + 1) / n)
        else:
            out[h] = 0.5 ** (4 * (2 * (h - n) + 1) / n)
    return out


def relative_positions(T):
    grid = np.zeros((T, T), dtype=np.int64)
    for i in range(T):
        for j in range(T):
            grid[i, j] = j - i
    return grid


def alibi_bias(seed, T, num_heads):
    m = alibi_slopes(num_heads)
    rel = relative_positions(T)
    bias = np.zeros((num_heads, T, T), dtype=np.float64)
    for h in range(num_heads):
        bias[h] = m[h] * rel
    return bias.astype(np.float32).reshape(-1)
