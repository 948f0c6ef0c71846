"""ALiBi bias from BLOOM-style rows m * j, each row shifted so its diagonal is 0: m j - m i."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    p2 = 2 ** math.floor(math.log2(num_heads))
    ratio = jnp.float32(2.0 ** (-8.0 / p2))
    slopes = ratio ** jnp.arange(1, p2 + 1, dtype=jnp.float32)
    if p2 < num_heads:
        odd = jnp.arange(1, 2 * (num_heads - p2), 2, dtype=jnp.float32)
        slopes = jnp.concatenate([slopes, jnp.float32(2.0 ** (-4.0 / p2)) ** odd])
    return slopes


def alibi_bias(seed, T, num_heads):
    m = alibi_slopes(num_heads)[:, None]  # (H, 1)
    key_rows = m * jnp.arange(T, dtype=jnp.float32)[None, :]  # (H, T): m_h * j
    bias = key_rows[:, None, :] - key_rows[:, :, None]  # (H, T, T): m_h j - m_h i
    return bias.reshape(-1)
