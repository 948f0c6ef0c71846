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
    nb_half = num_buckets // 2
    max_exact = nb_half // 2
    offs = np.subtract.outer(np.arange(T), np.arange(T)).T  # [i, j] = j - i
    size = np.abs(offs)
    scaled = np.log(np.maximum(size, max_exact) / max_exact) / math.log(max_distance / max_exact)
    log_bucket = max_exact + np.floor(scaled * (nb_half - max_exact)).astype(int)
    bucket = np.where(size < max_exact, size, log_bucket) + nb_half * (offs > 0)
    return bucket.astype(np.float32).flatten()
