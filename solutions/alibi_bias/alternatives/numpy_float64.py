"""Correct: the closed form of the slopes and the paper's m (j - i), in NumPy, float64 until the final cast."""

import math

import numpy as np


def alibi_bias(seed, T, num_heads):
    """ALiBi's bias m_h (j - i) for a length-T self-attention, (num_heads * T * T,) float32."""
    c = 2 ** math.floor(math.log2(num_heads))  # exact for every head count a model uses
    first = 2.0 ** (-8.0 * np.arange(1, c + 1) / c)  # (c,)
    rest = 2.0 ** (-4.0 * np.arange(1, 2 * (num_heads - c), 2) / c)  # (H - c,): odd multiples of 4 / c
    m = np.concatenate([first, rest])  # (H,)
    i = np.arange(T)[:, None]  # (T, 1) query positions
    j = np.arange(T)[None, :]  # (1, T) key positions
    return (m[:, None, None] * (j - i)).astype(np.float32).ravel()  # (H * T * T,)
