"""Correct: plain Python loops over positions and pairs, in the math module's float64; llama3 pair by pair as
Meta's llama-models `apply_scaling` writes it (an if / elif / else on the wavelength)."""

import math

import numpy as np


def _scaled(k, head_dim, base, factor, original_max_len, method, T):
    w = base ** (-2.0 * k / head_dim)
    if method == "linear":
        return w / factor
    if method in ("ntk", "dynamic"):
        if method == "ntk":
            alpha = factor
        elif T > original_max_len:
            alpha = factor * T / original_max_len - (factor - 1)
        else:
            return w
        bigger_base = base * alpha ** (head_dim / (head_dim - 2))
        return bigger_base ** (-2.0 * k / head_dim)
    wavelength = 2 * math.pi / w
    if wavelength < original_max_len / 4:
        return w
    if wavelength > original_max_len:
        return w / factor
    smooth = (original_max_len / wavelength - 1) / (4 - 1)
    return (1 - smooth) * w / factor + smooth * w


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    """RoPE's angles p * w'_k under `method`, (T * head_dim // 2,) float32."""
    base, factor = float(base), float(factor)
    table = []
    for p in range(T):
        for k in range(head_dim // 2):
            table.append(p * _scaled(k, head_dim, base, factor, original_max_len, method, T))
    return np.asarray(table, dtype=np.float32)
