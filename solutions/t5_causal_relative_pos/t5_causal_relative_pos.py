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
    del seed  # unused
    max_exact = num_buckets // 2  # distances below this get a bucket each
    num_log = num_buckets - max_exact  # log-spaced buckets, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    dist = jnp.maximum(-offset, 0)  # (T, T): how far back the key lies; later keys count as 0

    # Clip the distance up to max_exact before the log so that log(0) is never taken; cells
    # below max_exact take the exact branch of the `where` below anyway.
    ratio = jnp.maximum(dist, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact) * num_log  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, num_buckets - 1)  # far keys share the last bucket

    bucket = jnp.where(dist < max_exact, dist, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
