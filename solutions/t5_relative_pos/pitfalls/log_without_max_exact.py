"""Log formula without the max_exact ratios: log(size) / log(max_distance).

The log-spaced buckets then start too high: size max_exact itself no longer maps to bucket max_exact.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "Your log-spaced buckets start too high: the first size that is not exact, max_exact itself, "
    "should land in bucket max_exact, and in your output it lands higher. The log formula "
    "measures both the size and max_distance relative to max_exact: it takes the log of size / "
    "max_exact and divides by the log of max_distance / max_exact, so that max_exact maps to 0 "
    "and max_distance to the last bucket. Divide both by max_exact before taking the logs."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Log formula without the max_exact ratios: log(size) / log(max_distance)."""
    del seed  # unused
    nb_half = num_buckets // 2  # buckets per sign
    max_exact = nb_half // 2  # sizes below this get a bucket each
    num_log = nb_half - max_exact  # log-spaced buckets per sign, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = jnp.where(offset > 0, nb_half, 0)  # (T, T): key after query -> upper half
    size = jnp.abs(offset)  # (T, T)

    ratio = jnp.maximum(size, max_exact).astype(jnp.float32)  # MISTAKE: not divided by max_exact
    log_part = jnp.log(ratio) / math.log(max_distance) * num_log  # MISTAKE: nor here
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
