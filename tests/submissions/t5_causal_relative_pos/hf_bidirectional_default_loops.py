"""T5 relative position buckets for causal (decoder) self-attention."""

import math

import jax.numpy as jnp


def _relative_position_bucket(relative_position, num_buckets=32, max_distance=128, bidirectional=True):
    # per-pair port of the Hugging Face helper
    bucket = 0
    if bidirectional:
        num_buckets //= 2
        if relative_position > 0:
            bucket += num_buckets
        relative_position = abs(relative_position)
    else:
        relative_position = max(-relative_position, 0)
    max_exact = num_buckets // 2
    if relative_position < max_exact:
        return bucket + relative_position
    scaled = math.log(relative_position / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + int(scaled * (num_buckets - max_exact))
    return bucket + min(large, num_buckets - 1)


def t5_causal_relative_pos(seed, T, num_buckets, max_distance):
    """Maps every (query i, key j) pair of a length-T sequence to its one-directional T5 bucket.

    Only keys in the past count: the distance is n = max(i - j, 0), so keys at or
    after the query (the diagonal included) all land in bucket 0. All num_buckets
    buckets serve that one direction: the num_buckets // 2 smallest distances get a
    bucket each, larger distances share log-spaced buckets up to max_distance, and
    everything beyond lands in the last bucket, num_buckets - 1.

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        T: int >= 1, the sequence length (queries and keys alike).
        num_buckets: int >= 2 (odd or even), the number of buckets N.
        max_distance: int > num_buckets // 2, the distance where the log-spaced
            buckets stop growing.

    Returns:
        (T * T,) float32: the (T, T) bucket matrix, row i = query, column j = key,
        flattened row by row. Every value is a whole number in [0, N).
    """
    buckets = []
    for i in range(T):
        for j in range(T):
            buckets.append(_relative_position_bucket(j - i, num_buckets, max_distance))
    return jnp.asarray(buckets, dtype=jnp.float32)
