"""Correct: jax.numpy in float32, the past picked out with tril, the log as (log n - log me) * slope."""

import jax.numpy as jnp


def t5_causal_relative_pos(seed, T, num_buckets, max_distance):
    """T5 causal relative position buckets, flattened to (T * T,) float32."""
    max_exact = num_buckets // 2
    pos = jnp.arange(T)
    dist = jnp.tril(jnp.subtract.outer(pos, pos))  # (T, T): [i, j] = i - j below the diagonal, 0 elsewhere
    log_me = jnp.log(jnp.float32(max_exact))
    slope = (num_buckets - max_exact) / (jnp.log(jnp.float32(max_distance)) - log_me)
    log_dist = jnp.log(jnp.maximum(dist, 1).astype(jnp.float32))  # (T, T), log(0) avoided
    large = max_exact + jnp.floor((log_dist - log_me) * slope).astype(jnp.int32)
    bucket = jnp.where(dist < max_exact, dist, jnp.clip(large, max_exact, num_buckets - 1))
    return bucket.astype(jnp.float32).ravel()  # (T * T,)
