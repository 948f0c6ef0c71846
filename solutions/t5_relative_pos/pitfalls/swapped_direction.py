"""Boost on the wrong side: offsets with the key before the query (j < i) get the +num_buckets // 2.

Two of the source write-ups do this (HF's memory - query convention read the other way round, or
relative_position built as i - j). This kata puts keys after the query (j > i) in the upper half.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "The two halves of the bucket range are swapped: your upper half (num_buckets // 2 and up) "
    "holds the pairs whose key comes before the query. You can see it in the worked example: row "
    "0 should read 0, 5, 6, 6, with the larger numbers to the right of the diagonal, but yours "
    "has them below it. This kata adds the half-boost where the key comes after the query, j > i. "
    "Check the sign test, and check that the offset is key position minus query position (j - i), "
    "not i - j."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Boost on the wrong side: offsets with the key before the query (j < i) get the +num_buckets // 2."""
    del seed  # unused
    nb_half = num_buckets // 2  # buckets per sign
    max_exact = nb_half // 2  # sizes below this get a bucket each
    num_log = nb_half - max_exact  # log-spaced buckets per sign, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = jnp.where(offset < 0, nb_half, 0)  # MISTAKE: key before query -> upper half
    size = jnp.abs(offset)  # (T, T)

    ratio = jnp.maximum(size, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact) * num_log  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
