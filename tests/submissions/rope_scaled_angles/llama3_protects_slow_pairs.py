"""Plain-Python loops; llama3 band by band."""

import math

import numpy as np


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    base, factor = float(base), float(factor)
    L = original_max_len
    freqs = []
    for i in range(0, head_dim, 2):
        f = 1.0 / base ** (i / head_dim)
        if method == "linear":
            f = f / factor
        elif method == "ntk":
            f = 1.0 / (base * factor ** (head_dim / (head_dim - 2))) ** (i / head_dim)
        elif method == "dynamic":
            if T > L:
                a = factor * T / L - (factor - 1)
                f = 1.0 / (base * a ** (head_dim / (head_dim - 2))) ** (i / head_dim)
        else:
            wavelen = 2 * math.pi / f
            if wavelen < L / 4:
                f = f / factor  # high frequency band gets interpolated
            elif wavelen > L:
                pass  # low frequencies left alone
            else:
                smooth = (L / wavelen - 1) / 3
                f = (1 - smooth) * f / factor + smooth * f
        freqs.append(f)
    table = [[p * f for f in freqs] for p in range(T)]
    return np.array(table, dtype=np.float32).reshape(-1)
