"""Loops over pairs in float64 NumPy; Meta's if/elif/else for llama3."""

import math

import numpy as np


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    base, factor, L = float(base), float(factor), original_max_len
    d = head_dim
    if method == "ntk":
        base = base * factor ** (d / (d - 2))
    elif method == "dynamic" and T > L:
        base = base * (factor * T / L - factor + 1) ** (d / (d - 2))
    freqs = np.zeros(d // 2)
    for k in range(d // 2):
        w = base ** (-2 * k / d)
        if method == "linear":
            w /= factor
        elif method == "llama3":
            wavelen = 2 * math.pi / w
            if wavelen > L:
                w /= factor
            elif wavelen >= L / 4:
                smooth = (L / wavelen - 1) / 3
                w = (1 - smooth) * w / factor + smooth * w
        freqs[k] = w
    out = np.zeros((T, d // 2))
    for p in range(T):
        out[p] = p * freqs
    return out.astype(np.float32).reshape(-1)
