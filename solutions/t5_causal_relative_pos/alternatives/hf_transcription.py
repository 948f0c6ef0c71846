"""Correct: a line-by-line JAX transcription of Hugging Face's bucket function, bidirectional=False.

It takes log(0) at distance 0 (-inf, cast to an integer in the branch that `where` then discards),
and uses the context/memory naming of the original.
"""

import math

import jax.numpy as jnp


def _relative_position_bucket(relative_position, num_buckets, max_distance):
    relative_position = -jnp.minimum(relative_position, jnp.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (
        jnp.log(relative_position.astype(jnp.float32) / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).astype(jnp.int32)
    if_large = jnp.minimum(if_large, jnp.full_like(if_large, num_buckets - 1))
    return jnp.where(is_small, relative_position, if_large)


def t5_causal_relative_pos(seed, T, num_buckets, max_distance):
    """T5 causal relative position buckets, flattened to (T * T,) float32."""
    context_position = jnp.arange(T, dtype=jnp.int32)[:, None]  # (T, 1)
    memory_position = jnp.arange(T, dtype=jnp.int32)[None, :]  # (1, T)
    relative_position = memory_position - context_position  # (T, T)
    bucket = _relative_position_bucket(relative_position, num_buckets, max_distance)
    return bucket.astype(jnp.float32).ravel()  # (T * T,)
