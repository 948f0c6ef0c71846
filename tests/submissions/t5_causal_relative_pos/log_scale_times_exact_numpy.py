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
    nb = num_buckets
    me = nb // 2
    i, j = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    dist = np.maximum(i - j, 0).astype(np.float64)
    with np.errstate(divide="ignore"):
        pos = me + np.floor(me * np.log(dist / me) / np.log(max_distance / me))
    bucket = np.where(dist < me, dist, np.minimum(pos, nb - 1))
    return bucket.astype(np.float32).reshape(-1)
