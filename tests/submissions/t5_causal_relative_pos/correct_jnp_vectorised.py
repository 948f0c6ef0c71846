"""T5 relative position buckets for causal (decoder) self-attention."""

import math

import jax.numpy as jnp


def t5_causal_relative_pos(seed, T, num_buckets, max_distance):
    """Maps every (query i, key j) pair of a length-T sequence to its one-directional T5 bucket.

    Only keys in the past count: the distance is n = max(i - j, 0), so keys at or
    after the query (the diagonal included) all land in bucket 0. All num_buckets
    buckets serve that one direction: the num_buckets // 2 smallest distances get a
    bucket each, larger distances share log-spaced buckets up to max_distance, and
    everything beyond lands in the last bucket, num_buckets - 1.

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        T: int >= 1, the sequence length (queries and keys alike).
        num_buckets: int >= 2 (odd or even), the number of buckets N.
        max_distance: int > num_buckets // 2, the distance where the log-spaced
            buckets stop growing.

    Returns:
        (T * T,) float32: the (T, T) bucket matrix, row i = query, column j = key,
        flattened row by row. Every value is a whole number in [0, N).
    """
    max_exact = num_buckets // 2
    num_log = num_buckets - max_exact
    inv_span = num_log / math.log(max_distance / max_exact)
    query = jnp.arange(T, dtype=jnp.int32)[:, None]
    key = jnp.arange(T, dtype=jnp.int32)[None, :]
    rel = key - query
    past = jnp.maximum(-rel, 0)
    clipped = jnp.maximum(past, max_exact).astype(jnp.float32)  # keeps the log finite
    large = max_exact + jnp.floor(jnp.log(clipped / max_exact) * inv_span).astype(jnp.int32)
    large = jnp.minimum(large, num_buckets - 1)
    bucket = jnp.where(past < max_exact, past, large)
    return bucket.astype(jnp.float32).reshape(-1)
