"""T5 relative position buckets for bidirectional (encoder) self-attention."""

import math  # noqa: F401

import jax.numpy as jnp  # noqa: F401


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
    result = []
    for query in range(T):
        for key in range(T):
            offset = key - query
            bucket = half if offset > 0 else 0
            size = abs(offset)
            if size < max_exact:
                bucket += size
            else:
                position = (half - max_exact) * math.log(size / max_exact) / math.log(max_distance / max_exact)
                bucket += min(half - 1, max_exact + math.floor(position))
            result.append(float(bucket))
    return jnp.array(result, dtype=jnp.float32)
