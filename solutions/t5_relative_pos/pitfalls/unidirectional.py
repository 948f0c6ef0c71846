"""The decoder's causal (unidirectional) bucketing instead of the bidirectional one.

Keys after the query all map to bucket 0, and the whole range of num_buckets serves keys before the
query: max_exact = num_buckets // 2 and the clamp is num_buckets - 1.
"""

import math

import jax.numpy as jnp

MESSAGE = (
    "This is the causal (decoder) variant of T5's bucketing: every key after the query lands in "
    "bucket 0 and all num_buckets buckets go to keys before the query. The encoder's "
    "bidirectional variant asked for here splits the range by sign: num_buckets // 2 buckets per "
    "sign, num_buckets // 4 of them exact, and keys after the query (j > i) moved up by "
    "num_buckets // 2. If everything above your diagonal is 0, this is the mistake."
)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    """The decoder's causal (unidirectional) bucketing instead of the bidirectional one."""
    del seed  # unused
    max_exact = num_buckets // 2  # MISTAKE: the causal split, one sign only
    num_log = num_buckets - max_exact

    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    offset = pos[None, :] - pos[:, None]  # (T, T): key j minus query i
    boost = 0  # MISTAKE: no sign split
    size = jnp.maximum(-offset, 0)  # MISTAKE: keys after the query count as size 0

    ratio = jnp.maximum(size, max_exact).astype(jnp.float32) / max_exact  # (T, T), >= 1
    log_part = jnp.log(ratio) / math.log(max_distance / max_exact) * num_log  # (T, T), >= 0
    large = max_exact + log_part.astype(jnp.int32)  # truncation == floor, as log_part >= 0
    large = jnp.minimum(large, num_buckets - 1)

    bucket = boost + jnp.where(size < max_exact, size, large)  # (T, T)
    return bucket.astype(jnp.float32).reshape(-1)  # (T * T,)
