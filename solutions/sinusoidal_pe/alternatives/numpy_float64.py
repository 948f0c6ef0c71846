"""Correct: the paper's formula transcribed in NumPy, float64 throughout, with the division the paper writes."""

import numpy as np


def sinusoidal_pe(seed, T, d_model, offset):
    """Sinusoidal position encoding of positions offset .. offset + T - 1, (T * d_model,) float32."""
    pos = np.arange(offset, offset + T, dtype=np.float64)[:, None]  # (T, 1)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]  # (1, d/2): the sine columns 0, 2, 4, ...
    angle = pos / np.power(10000.0, two_i / d_model)  # (T, d/2): pos / 10000^(2i / d_model)
    table = np.empty((T, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(angle)  # PE(pos, 2i)
    table[:, 1::2] = np.cos(angle)  # PE(pos, 2i + 1)
    return table.astype(np.float32).reshape(-1)  # (T * d_model,)
