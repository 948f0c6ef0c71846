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
    H = num_buckets // 2
    E = H // 2
    L = H - E
    buckets = []
    for i in range(T):
        row = []
        for j in range(T):
            s = abs(j - i)
            if s < E:
                b = s
            else:
                pos = L * math.log(s) / math.log(max_distance)
                b = min(E + int(math.floor(pos)), H - 1)
            if j > i:
                b += H
            row.append(b)
        buckets.append(row)
    return jnp.array(buckets, dtype=jnp.float32).ravel()
