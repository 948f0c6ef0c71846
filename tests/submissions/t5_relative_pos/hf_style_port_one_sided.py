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
    context = jnp.arange(T)[:, None]
    memory = jnp.arange(T)[None, :]
    relative_position = memory - context
    n = -jnp.minimum(relative_position, 0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        jnp.log(n.astype(jnp.float32) / max_exact + 1e-30)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).astype(jnp.int32)
    val_if_large = jnp.minimum(val_if_large, num_buckets - 1)
    ret = jnp.where(is_small, n, val_if_large)
    return ret.astype(jnp.float32).reshape(-1)
