"""Correct: jax.numpy in float32, with the log formula rearranged as (log d - log me) * slope."""

import jax.numpy as jnp


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """T5 bidirectional relative position buckets, flattened to (T * T,) float32."""
    nb_half = num_buckets // 2
    max_exact = nb_half // 2
    pos = jnp.arange(T)
    offset = jnp.subtract.outer(pos, pos).T  # (T, T): [i, j] = j - i
    size = jnp.abs(offset)
    log_me = jnp.log(jnp.float32(max_exact))
    slope = (nb_half - max_exact) / (jnp.log(jnp.float32(max_distance)) - log_me)
    log_size = jnp.log(jnp.maximum(size, 1).astype(jnp.float32))  # (T, T), log(0) avoided
    large = max_exact + jnp.floor((log_size - log_me) * slope).astype(jnp.int32)
    bucket = jnp.where(size < max_exact, size, jnp.clip(large, max_exact, nb_half - 1))
    bucket = bucket + (jnp.sign(offset) == 1) * nb_half
    return bucket.astype(jnp.float32).ravel()  # (T * T,)
