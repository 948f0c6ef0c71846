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
    n_half = num_buckets // 2
    n_exact = n_half // 2
    ar = jnp.arange(T)
    relative_position = ar[:, None] - ar[None, :]  # (T, T)
    buckets = (relative_position > 0).astype(jnp.int32) * n_half
    relative_position = jnp.abs(relative_position)
    is_small = relative_position < n_exact
    if_large = n_exact + (
        jnp.log(jnp.maximum(relative_position, n_exact) / n_exact)
        / math.log(max_distance / n_exact)
        * (n_half - n_exact)
    ).astype(jnp.int32)
    if_large = jnp.minimum(if_large, n_half - 1)
    buckets = buckets + jnp.where(is_small, relative_position, if_large)
    return buckets.astype(jnp.float32).reshape(T * T)
