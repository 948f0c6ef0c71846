"""Exact range too wide: max_exact = num_buckets // 2 instead of num_buckets // 4.

Every size below num_buckets // 2 gets its own bucket, no log-spaced buckets are left, and every
larger size lands in the last bucket of its half.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "Too many offsets get a bucket of their own. The exact buckets cover only half of each sign's "
    "range: max_exact is num_buckets // 4 (half of num_buckets // 2), not num_buckets // 2. With "
    "num_buckets = 8 the sizes 0 and 1 are exact and sizes 2 to 3 share log-spaced buckets; if "
    "your output shows bucket 3 for an offset of size 3, or shows no log-spaced buckets at all, "
    "this is the cause."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Exact range too wide: max_exact = num_buckets // 2 instead of num_buckets // 4."""
    del seed  # unused
    nb_half = num_buckets // 2  # buckets per sign
    max_exact = nb_half  # MISTAKE: should be nb_half // 2
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
