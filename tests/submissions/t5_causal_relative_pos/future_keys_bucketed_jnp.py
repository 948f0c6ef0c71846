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
    n_log = num_buckets - max_exact
    log_range = math.log(max_distance / max_exact)
    positions = jnp.arange(T)
    relative = positions[None, :] - positions[:, None]  # key minus query
    n = jnp.maximum(relative, 0)
    n_f = jnp.maximum(n, 1).astype(jnp.float32)  # avoid log(0)
    log_bucket = max_exact + (jnp.log(n_f / max_exact) / log_range * n_log).astype(jnp.int32)
    log_bucket = jnp.clip(log_bucket, 0, num_buckets - 1)
    bucket = jnp.where(n < max_exact, n, log_bucket)
    return bucket.astype(jnp.float32).flatten()
