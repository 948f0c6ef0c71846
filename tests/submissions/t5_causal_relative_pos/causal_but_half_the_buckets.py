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
    # one direction gets half of the table, as in the encoder
    per_dir = num_buckets // 2
    exact = per_dir // 2
    denom = math.log(max_distance / exact)
    idx = jnp.arange(T)
    back = jnp.clip(idx[:, None] - idx[None, :], 0, None)  # how far back key j is from query i
    safe = jnp.maximum(back, exact).astype(jnp.float32)
    log_bucket = exact + jnp.floor(jnp.log(safe / exact) / denom * (per_dir - exact)).astype(jnp.int32)
    log_bucket = jnp.minimum(log_bucket, per_dir - 1)
    out = jnp.where(back < exact, back, log_bucket)
    return out.astype(jnp.float32).reshape(T * T)
