"""Peers' formulas transcribed in float64, shared by the tests of the problems that follow them."""

from __future__ import annotations

import math

import numpy as np


def get_slopes(n: int) -> list[float]:
    """ofirpress/attention_with_linear_biases' get_slopes (fairseq/models/transformer.py), in Python floats:
    a power of two n gets the geometric sequence that starts, and steps, at 2 ** (-2 ** -(log2 n - 3)); any other
    n gets that sequence for the largest power of two below it, then every other slope of get_slopes of twice
    that power, from the first, cut to the heads still missing."""
    def power_of_2(n):
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + get_slopes(2 * closest)[0::2][: n - closest]


def even_first(d: int) -> np.ndarray:
    """(d,): the reordering of one head's features that turns interleaved pairs into half-split ones: 0, 2, ..,
    1, 3, .. (the half-split layout's feature j is the paper's feature even_first(d)[j]; Hugging Face's
    conversion of Meta's checkpoints)."""
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def rotation(p, d: int, base: float, sign: float = 1.0) -> np.ndarray:
    """(d, d): RoFormer's R^d_(Theta, p), block-diagonal with [[cos, -sin], [sin, cos]] of the angle p theta_i
    on the pairs (2i, 2i + 1), theta_i = base ** (-2i / d); ``sign`` -1 turns the other way."""
    R = np.zeros((d, d))
    for i in range(d // 2):
        a = sign * p * base ** (-2.0 * i / d)
        R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
    return R
