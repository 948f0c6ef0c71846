"""Correct: pure numpy, with the log formula evaluated in float64."""

import math

import numpy as np


def t5_causal_relative_pos(seed, T, num_buckets, max_distance):
    """T5 causal relative position buckets, flattened to (T * T,) float32."""
    max_exact = num_buckets // 2
    pos = np.arange(T)
    dist = np.clip(pos[:, None] - pos[None, :], 0, None)  # (T, T): max(i - j, 0)
    ratio = np.maximum(dist, max_exact) / max_exact  # float64
    log_part = np.log(ratio) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    large = np.minimum(max_exact + np.floor(log_part).astype(np.int64), num_buckets - 1)
    bucket = np.where(dist < max_exact, dist, large)
    return bucket.astype(np.float32).reshape(-1)  # (T * T,)
