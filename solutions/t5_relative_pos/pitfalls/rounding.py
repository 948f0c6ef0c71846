"""Rounding instead of flooring the log-spaced position.

A size whose log position has a fractional part of 0.5 or more moves up one bucket.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "Some log-spaced buckets come out one too high. The position from the log formula has to be "
    "rounded down (floor, or truncation toward zero, which is the same here since it is never "
    "negative), not rounded to the nearest whole number. The first size that shows it is one "
    "whose position has a fractional part of 0.5 or more, for instance size 3 with num_buckets = "
    "8 and max_distance = 6, which belongs in bucket 2."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Rounding instead of flooring the log-spaced position."""
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
    large = max_exact + jnp.round(log_part).astype(jnp.int32)  # MISTAKE: round, not floor
    large = jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
