"""No half-boost: keys after the query are not moved up by num_buckets // 2.

The output comes out symmetric, and the upper half of the bucket range is never used.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "Your matrix is symmetric: a key 2 positions after the query gets the same bucket as a key 2 "
    "positions before it, and no bucket of num_buckets // 2 or more ever appears. The "
    "bidirectional scheme tells the two directions apart: pairs whose key comes after the query "
    "(j > i) are moved up by num_buckets // 2 into the upper half of the range."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """No half-boost: keys after the query are not moved up by num_buckets // 2."""
    del seed  # unused
    nb_half = num_buckets // 2  # buckets per sign
    max_exact = nb_half // 2  # sizes below this get a bucket each
    num_log = nb_half - max_exact  # log-spaced buckets per sign, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = 0  # MISTAKE: no half-boost for keys after the query
    size = jnp.abs(offset)  # (T, T)

    ratio = jnp.maximum(size, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact) * num_log  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
