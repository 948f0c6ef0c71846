"""Correct: plain Python loops over heads, queries and keys, the slopes as Python floats."""

import numpy as np


def alibi_bias(seed, T, num_heads):
    """ALiBi's bias m_h (j - i) for a length-T self-attention, (num_heads * T * T,) float32."""
    c = 1
    while 2 * c <= num_heads:  # the largest power of two not above num_heads
        c *= 2
    slopes = []
    for h in range(num_heads):
        if h < c:
            slopes.append(2.0 ** (-8.0 * (h + 1) / c))
        else:
            slopes.append(2.0 ** (-4.0 * (2 * (h - c) + 1) / c))
    values = []
    for m in slopes:
        for i in range(T):
            for j in range(T):
                values.append(m * (j - i))
    return np.array(values, dtype=np.float32)  # (H * T * T,)
