"""Correct: plain Python loops over positions, heads and pairs, math.cos and math.sin in float64."""

import math

import numpy as np


def rope(seed, x, offset, base, interleaved):
    """RoPE of x (T, H, d) at positions offset .. offset + T - 1, (T * H * d,) float32."""
    x = np.asarray(x)
    T, H, d = x.shape
    base = float(base)
    out = np.zeros((T, H, d))
    for t in range(T):
        p = offset + t
        for h in range(H):
            for k in range(d // 2):
                i, j = (2 * k, 2 * k + 1) if interleaved else (k, k + d // 2)  # the pair's two features
                phi = p * base ** (-2.0 * k / d)
                a, b = float(x[t, h, i]), float(x[t, h, j])
                out[t, h, i] = a * math.cos(phi) - b * math.sin(phi)
                out[t, h, j] = b * math.cos(phi) + a * math.sin(phi)
    return out.astype(np.float32).reshape(-1)  # (T * H * d,)
