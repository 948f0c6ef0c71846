"""T5 relative position buckets for bidirectional (encoder) self-attention."""

import math

import jax.numpy as jnp


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
    del seed  # unused
    nb_half = num_buckets // 2  # buckets per sign
    max_exact = nb_half // 2  # sizes below this get a bucket each
    num_log = nb_half - max_exact  # log-spaced buckets per sign, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = jnp.where(offset > 0, nb_half, 0)  # (T, T): key after query -> upper half
    size = jnp.abs(offset)  # (T, T)

    # Clip the size up to max_exact before the log so that log(0) is never taken; cells
    # below max_exact take the exact branch of the `where` below anyway.
    ratio = jnp.maximum(size, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact) * num_log  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
