"""ALiBi bias."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    c = 2 ** math.floor(math.log2(num_heads))
    h = jnp.arange(c, dtype=jnp.float32)
    slopes = 2.0 ** (-8.0 * (h + 1) / c)
    if c < num_heads:
        j = jnp.arange(num_heads - c, dtype=jnp.float32)
        slopes = jnp.concatenate([slopes, 2.0 ** (-4.0 * (2 * j + 1) / c)])
    return slopes


def relative_positions(T):
    i = jnp.arange(T)
    return i[:, None] - i[None, :]  # distance between query i and key j


def alibi_bias(seed, T, num_heads):
    slopes = alibi_slopes(num_heads)[:, None, None]
    return (slopes * relative_positions(T)).reshape(-1)
