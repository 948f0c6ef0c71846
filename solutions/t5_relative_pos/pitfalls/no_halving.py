"""Bidirectional split without halving: num_buckets used where num_buckets // 2 belongs.

The boost is num_buckets, max_exact is num_buckets // 2 and the clamp num_buckets - 1, so bucket
indices run up to 2 * num_buckets - 1. (HF's code halves num_buckets in place; skipping that line.)
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "Your bucket indices reach num_buckets and beyond, so they would not fit an embedding table "
    "of num_buckets rows. In the bidirectional scheme each sign gets only half of the buckets: "
    "the boost for keys after the query is num_buckets // 2, the exact sizes are those below "
    "num_buckets // 4, and the clamp is num_buckets // 2 - 1. Use the per-sign count everywhere "
    "you used num_buckets."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Bidirectional split without halving: num_buckets used where num_buckets // 2 belongs."""
    del seed  # unused
    nb_half = num_buckets  # MISTAKE: should be num_buckets // 2
    max_exact = nb_half // 2  # sizes below this get a bucket each
    num_log = nb_half - max_exact  # log-spaced buckets per sign, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = jnp.where(offset > 0, nb_half, 0)  # (T, T): key after query -> upper half
    size = jnp.abs(offset)  # (T, T)

    ratio = jnp.maximum(size, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact) * num_log  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
