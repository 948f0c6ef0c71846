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
    max_exact = num_buckets // 2
    n_log = num_buckets - max_exact
    denom = math.log(max_distance / max_exact)

    def size_bucket(size):
        clipped = jnp.maximum(size, max_exact).astype(jnp.float32)
        spread = jnp.log(clipped / max_exact) / denom * n_log
        far = jnp.minimum(max_exact + spread.astype(jnp.int32), num_buckets - 1)
        return jnp.where(size < max_exact, size, far)

    pos = jnp.arange(T)
    rel = pos[None, :] - pos[:, None]
    side = jnp.where(rel > 0, num_buckets, 0)
    bucket = side + size_bucket(jnp.abs(rel))
    return bucket.astype(jnp.float32).flatten()
