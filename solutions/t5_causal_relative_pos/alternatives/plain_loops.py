"""Correct: plain Python loops over every (query, key) pair, math.log in float64."""

import math

import numpy as np


def _bucket(n, num_buckets, max_distance):
    max_exact = num_buckets // 2
    if n < max_exact:
        return n
    scaled = math.log(n / max_exact) / math.log(max_distance / max_exact)
    return min(max_exact + int(scaled * (num_buckets - max_exact)), num_buckets - 1)


def t5_causal_relative_pos(seed, T, num_buckets, max_distance):
    """T5 causal relative position buckets, flattened to (T * T,) float32."""
    rows = [[_bucket(max(i - j, 0), num_buckets, max_distance) for j in range(T)] for i in range(T)]
    return np.array(rows, dtype=np.float32).reshape(-1)  # (T * T,)
