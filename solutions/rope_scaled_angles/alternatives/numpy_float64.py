"""Correct: every formula in NumPy, in float64 until the final cast (runs eagerly: base and factor arrive as
plain numbers when the grader falls back from jax.jit)."""

import math

import numpy as np


def _frequencies(head_dim, base):
    return np.power(float(base), -np.arange(head_dim // 2, dtype=np.float64) * 2.0 / head_dim)  # (d/2,)


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    """RoPE's angles p * w'_k under `method`, (T * head_dim // 2,) float32."""
    s, L, d = float(factor), original_max_len, head_dim
    w = _frequencies(d, base)  # (d/2,)
    if method == "linear":
        scaled = w / s
    elif method == "ntk":
        scaled = _frequencies(d, float(base) * s ** (d / (d - 2)))
    elif method == "dynamic":
        alpha = max(1.0, s * T / L - (s - 1.0))  # 1 while T <= L: plain RoPE
        scaled = _frequencies(d, float(base) * alpha ** (d / (d - 2)))
    else:  # llama3
        wavelength = 2.0 * math.pi / w
        g = np.clip((L / wavelength - 1.0) / 3.0, 0.0, 1.0)  # 0 past L, 1 below L / 4: the bands in one line
        scaled = (1.0 - g) * w / s + g * w
    return (np.arange(T, dtype=np.float64)[:, None] * scaled[None, :]).astype(np.float32).ravel()
