"""Correct: plain Python loops over positions and columns, math.sin and math.cos in float64."""

import math

import numpy as np


def sinusoidal_pe(seed, T, d_model, offset):
    """Sinusoidal position encoding of positions offset .. offset + T - 1, (T * d_model,) float32."""
    rows = []
    for t in range(T):
        p = offset + t
        row = []
        for j in range(d_model):
            pair = j // 2  # columns 2k and 2k + 1 share pair k's frequency
            angle = p * 10000.0 ** (-2 * pair / d_model)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        rows.append(row)
    return np.asarray(rows, dtype=np.float32).reshape(-1)  # (T * d_model,)
