"""T5 relative position buckets for bidirectional (encoder) self-attention."""

import math  # noqa: F401

import jax.numpy as jnp  # noqa: F401
import numpy as np


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Maps every (query i, key j) pair of a length-T sequence to its T5 bucket.

    The offset j - i is sorted by sign (offsets with the key after the query are
    moved up by num_buckets // 2), then by size: the num_buckets // 4 smallest
    sizes get one bucket each, larger sizes share log-spaced buckets up to
    max_distance, and everything beyond lands in the last bucket of its half.

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        T: int >= 1, the sequence length (queries and keys alike).
        num_buckets: int, even and >= 4, the number of buckets N over both signs.
        max_distance: int > num_buckets / 4, the offset size where the
            log-spaced buckets stop growing.

    Returns:
        (T * T,) float32: the (T, T) bucket matrix, row i = query, column j = key,
        flattened row by row. Every value is a whole number in [0, N).
    """
    half = num_buckets // 2
    max_exact = half // 2
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    rel = j - i
    dist = np.abs(rel)
    with np.errstate(divide="ignore"):
        log_pos = np.log(np.maximum(dist, max_exact) / max_exact) / np.log(max_distance / max_exact)
    big = max_exact + np.floor(log_pos * (half - max_exact)).astype(np.int64)
    big = np.clip(big, 0, half)  # stay inside this direction's half
    bucket = np.where(dist < max_exact, dist, big) + np.where(rel > 0, half, 0)
    return bucket.astype(np.float32).reshape(-1)
