"""No clamp: the log-spaced bucket keeps growing past max_distance.

Bucket indices leave their half (and, above the diagonal, the whole range [0, num_buckets)).
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "Your buckets keep growing for offsets larger than max_distance, so some indices leave their "
    "half of the range and, far above the diagonal, even reach num_buckets or more, which an "
    "embedding table of num_buckets rows could not look up. max_distance is where the log-spaced "
    "buckets stop: every larger offset shares the last bucket of its half, num_buckets // 2 - 1 "
    "before the boost. Add that upper bound to the log-spaced branch."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """No clamp: the log-spaced bucket keeps growing past max_distance."""
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
    # MISTAKE: no clamp to nb_half - 1

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
