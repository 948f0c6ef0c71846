"""Correct: plain Python loops over every (query, key) pair, math.log in float64."""

import math

import numpy as np


def _bucket(offset, num_buckets, max_distance):
    nb_half = num_buckets // 2
    max_exact = nb_half // 2
    bucket = nb_half if offset > 0 else 0
    size = abs(offset)
    if size < max_exact:
        return bucket + size
    scaled = math.log(size / max_exact) / math.log(max_distance / max_exact)
    return bucket + min(max_exact + math.floor(scaled * (nb_half - max_exact)), nb_half - 1)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """T5 bidirectional relative position buckets, flattened to (T * T,) float32."""
    rows = [[_bucket(j - i, num_buckets, max_distance) for j in range(T)] for i in range(T)]
    return np.array(rows, dtype=np.float32).reshape(-1)  # (T * T,)
