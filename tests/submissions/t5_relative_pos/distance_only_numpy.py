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
    per_side = num_buckets // 2
    exact = per_side // 2
    n_log = per_side - exact
    idx = np.arange(T)
    dist = np.abs(idx[:, None] - idx[None, :])
    with np.errstate(divide="ignore"):
        pos = np.log(dist / exact) / np.log(max_distance / exact) * n_log
    pos = np.where(dist >= exact, pos, 0.0)
    logb = np.minimum(exact + np.floor(pos).astype(np.int64), per_side - 1)
    bucket = np.where(dist < exact, dist, logb)
    return jnp.asarray(bucket.reshape(-1), dtype=jnp.float32)
