"""T5 relative position buckets for causal (decoder) self-attention."""

import math  # noqa: F401

import jax.numpy as jnp  # noqa: F401
import numpy as np


def t5_causal_relative_pos(seed, T, num_buckets, max_distance):
    """Maps every (query i, key j) pair of a length-T sequence to its one-directional T5 bucket.

    Only keys in the past count: the distance is n = max(i - j, 0), so keys at or
    after the query (the diagonal included) all land in bucket 0. All num_buckets
    buckets serve that one direction: the num_buckets // 2 smallest distances get a
    bucket each, larger distances share log-spaced buckets up to max_distance, and
    everything beyond lands in the last bucket, num_buckets - 1.

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        T: int >= 1, the sequence length (queries and keys alike).
        num_buckets: int >= 2 (odd or even), the number of buckets N.
        max_distance: int > num_buckets // 2, the distance where the log-spaced
            buckets stop growing.

    Returns:
        (T * T,) float32: the (T, T) bucket matrix, row i = query, column j = key,
        flattened row by row. Every value is a whole number in [0, N).
    """
    half = num_buckets // 2
    exact = max(half // 2, 1)  # with 2 or 3 buckets the quarter would be 0
    q = np.arange(T)[:, None]
    k = np.arange(T)[None, :]
    rel = k - q
    side = np.where(rel < 0, half, 0)  # keys in the past use the upper half
    size = np.abs(rel)
    logpos = np.log(np.maximum(size, exact) / exact) / np.log(max_distance / exact)
    far = exact + np.floor(logpos * (half - exact)).astype(np.int64)
    far = np.minimum(far, half - 1)
    bucket = side + np.where(size < exact, size, far)
    return bucket.astype(np.float32).ravel()
