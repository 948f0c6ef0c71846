"""Floor taken too early: the log ratio is truncated before multiplying by nb_half - max_exact.

floor(log(d / me) / log(md / me)) is 0 for every size below max_distance, so all of them share
bucket max_exact and the log-spaced buckets in between are never used.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "All sizes from max_exact up to max_distance share one bucket, max_exact, and the log-spaced "
    "buckets between it and the last one never appear. The rounding down comes too early: the log "
    "ratio, a number between 0 and 1 for these sizes, must first be scaled by the number of "
    "log-spaced buckets (num_buckets // 2 - num_buckets // 4), and only then floored. Check the "
    "parentheses around the integer conversion."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Floor taken too early: the log ratio is truncated before multiplying by nb_half - max_exact."""
    del seed  # unused
    nb_half = num_buckets // 2  # buckets per sign
    max_exact = nb_half // 2  # sizes below this get a bucket each
    num_log = nb_half - max_exact  # log-spaced buckets per sign, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = jnp.where(offset > 0, nb_half, 0)  # (T, T): key after query -> upper half
    size = jnp.abs(offset)  # (T, T)

    ratio = jnp.maximum(size, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact)  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32) * num_log  # MISTAKE: floor before scaling
    large = jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
