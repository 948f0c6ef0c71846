"""Clamp off by one: large buckets clamped to num_buckets // 2 instead of num_buckets // 2 - 1.

Offsets of size max_distance or more then spill into the first bucket of the other half.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "Far-away offsets spill over into the other half of the bucket range. For an offset of size "
    "max_distance or more the log formula reaches num_buckets // 2, and the clamp has to bring it "
    "back to the last bucket of its own half, which is num_buckets // 2 - 1. Look at cells far "
    "from the diagonal when T is larger than max_distance: below the diagonal they must never "
    "reach num_buckets // 2, and above it never num_buckets. Clamp one lower."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Clamp off by one: large buckets clamped to num_buckets // 2 instead of num_buckets // 2 - 1."""
    del seed  # unused
    nb_half = num_buckets // 2  # buckets per sign
    max_exact = nb_half // 2  # sizes below this get a bucket each
    num_log = nb_half - max_exact  # log-spaced buckets per sign, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = jnp.where(offset > 0, nb_half, 0)  # (T, T): key after query -> upper half
    size = jnp.abs(offset)  # (T, T)

    ratio = jnp.maximum(size, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact) * num_log  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, nb_half)  # MISTAKE: should be nb_half - 1

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
