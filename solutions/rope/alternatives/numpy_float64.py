"""Correct: the two layouts in NumPy, float64 until the final cast (runs eagerly only, no jit)."""

import numpy as np


def rope(seed, x, offset, base, interleaved):
    """RoPE of x (T, H, d) at positions offset .. offset + T - 1, (T * H * d,) float32."""
    x = np.asarray(x, dtype=np.float64)  # (T, H, d)
    T, H, d = x.shape
    half = d // 2
    theta = float(base) ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,): base ** (-2k / d)
    phase = np.arange(offset, offset + T, dtype=np.float64)[:, None] * theta  # (T, d/2)
    c = np.cos(phase)[:, None, :]  # (T, 1, d/2): shared by every head
    s = np.sin(phase)[:, None, :]
    first = x[..., 0::2] if interleaved else x[..., :half]  # (T, H, d/2): each pair's first feature
    second = x[..., 1::2] if interleaved else x[..., half:]  # (T, H, d/2): and its second
    out = np.empty_like(x)
    if interleaved:
        out[..., 0::2] = first * c - second * s
        out[..., 1::2] = second * c + first * s
    else:
        out[..., :half] = first * c - second * s
        out[..., half:] = second * c + first * s
    return out.astype(np.float32).reshape(-1)  # (T * H * d,)
