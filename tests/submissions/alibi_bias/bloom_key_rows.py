"""ALiBi bias the way BLOOM builds it: one row of key positions per head."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    p2 = 2 ** math.floor(math.log2(num_heads))
    ratio = jnp.float32(2.0 ** (-8.0 / p2))  # first slope, and the step between slopes
    slopes = ratio ** jnp.arange(1, p2 + 1, dtype=jnp.float32)
    if p2 < num_heads:
        half_ratio = jnp.float32(2.0 ** (-4.0 / p2))
        odd = jnp.arange(1, 2 * (num_heads - p2), 2, dtype=jnp.float32)
        slopes = jnp.concatenate([slopes, half_ratio ** odd])
    return slopes


def alibi_bias(seed, T, num_heads):
    slopes = alibi_slopes(num_heads)
    keys = jnp.arange(T, dtype=jnp.float32)
    rows = slopes[:, None] * keys[None, :]  # (H, T): softmax does not care about a per-row constant
    bias = jnp.broadcast_to(rows[:, None, :], (num_heads, T, T))
    return bias.reshape(-1)
