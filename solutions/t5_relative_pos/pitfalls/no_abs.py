"""Missing abs: negative offsets (key before query) are bucketed by their signed value.

Every negative offset counts as small, so cells below the diagonal hold negative bucket indices.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "Cells below the diagonal (key before the query) hold negative numbers, which are not bucket "
    "indices. After the sign has decided the half-boost, the rest of the scheme works on the size "
    "of the offset, its absolute value: an offset of -3 is bucketed like +3, just without the "
    "boost."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """Missing abs: negative offsets (key before query) are bucketed by their signed value."""
    del seed  # unused
    nb_half = num_buckets // 2  # buckets per sign
    max_exact = nb_half // 2  # sizes below this get a bucket each
    num_log = nb_half - max_exact  # log-spaced buckets per sign, the last one included

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = jnp.where(offset > 0, nb_half, 0)  # (T, T): key after query -> upper half
    size = offset  # MISTAKE: should be the absolute value

    ratio = jnp.maximum(size, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact) * num_log  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
