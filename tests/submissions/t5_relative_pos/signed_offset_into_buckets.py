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
    n_exact = half // 2
    q = jnp.arange(T)[:, None]
    k = jnp.arange(T)[None, :]
    rel = k - q
    upper = (rel > 0).astype(jnp.int32) * half
    safe = jnp.clip(rel, n_exact, None).astype(jnp.float32)
    scale = (half - n_exact) / math.log(max_distance / n_exact)
    far = n_exact + jnp.floor(jnp.log(safe / n_exact) * scale).astype(jnp.int32)
    far = jnp.minimum(far, half - 1)
    out = jnp.where(rel < n_exact, rel, far) + upper
    return out.reshape(T * T).astype(jnp.float32)
