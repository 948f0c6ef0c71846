"""NumPy version of the four rescalings (float64, cast at the end)."""

import math

import numpy as np


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    base, s, L, d = float(base), float(factor), original_max_len, head_dim
    k = np.arange(d // 2)
    w = base ** (-2.0 * k / d)
    if method == "linear":
        w = w / s
    elif method in ("ntk", "dynamic"):
        if method == "ntk":
            a = s
        else:
            a = max(1.0, s * T / L - (s - 1.0))
        new_base = base / a ** (d / (d - 2))  # NTK: rescale the base
        w = new_base ** (-2.0 * k / d)
    else:
        lam = 2 * math.pi / w
        out = []
        for wk, lk in zip(w, lam):
            if lk < L / 4:
                out.append(wk)
            elif lk > L:
                out.append(wk / s)
            else:
                g = (L / lk - 1) / 3
                out.append((1 - g) * wk / s + g * wk)
        w = np.array(out)
    return (np.arange(T)[:, None] * w[None, :]).astype(np.float32).ravel()
