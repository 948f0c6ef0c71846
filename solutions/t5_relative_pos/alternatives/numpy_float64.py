"""Correct: pure numpy, with the log formula evaluated in float64."""

import math

import numpy as np


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """T5 bidirectional relative position buckets, flattened to (T * T,) float32."""
    nb_half = num_buckets // 2
    max_exact = nb_half // 2
    pos = np.arange(T)
    offset = pos[None, :] - pos[:, None]  # (T, T)
    size = np.abs(offset)
    ratio = np.maximum(size, max_exact) / max_exact  # float64
    log_part = np.log(ratio) / math.log(max_distance / max_exact) * (nb_half - max_exact)
    large = np.minimum(max_exact + np.floor(log_part).astype(np.int64), nb_half - 1)
    bucket = np.where(size < max_exact, size, large) + nb_half * (offset > 0)
    return bucket.astype(np.float32).reshape(-1)  # (T * T,)
