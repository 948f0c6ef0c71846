"""ALiBi bias, slopes by the get_slopes recursion."""

import math

import numpy as np


def _power_of_two_slopes(n):
    ratio = 2 ** (-8 / n)
    return [ratio ** (k + 1) for k in range(n)]


def alibi_slopes(num_heads):
    if math.log2(num_heads).is_integer():
        return np.array(_power_of_two_slopes(num_heads), dtype=np.float32)
    closest = 2 ** math.floor(math.log2(num_heads))
    bigger = list(alibi_slopes(2 * closest))
    extra = bigger[1::2][: num_heads - closest]  # every other slope of the doubled list
    return np.array(_power_of_two_slopes(closest) + extra, dtype=np.float32)


def relative_positions(T):
    r = np.arange(T)
    return r[None, :] - r[:, None]


def alibi_bias(seed, T, num_heads):
    slopes = alibi_slopes(num_heads).astype(np.float64)
    out = slopes[:, None, None] * relative_positions(T)[None, :, :]
    return out.astype(np.float32).reshape(-1)
