"""ALiBi bias with MPT's slopes (next power of two)."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    n = 2 ** math.ceil(math.log2(num_heads))  # round the head count up to a power of two
    base = jnp.arange(1, n + 1, dtype=jnp.float32) * (8 / n)
    slopes = 1.0 / jnp.power(2.0, base)
    return slopes[:num_heads]


def relative_positions(T):
    pos = jnp.arange(T, dtype=jnp.float32)
    return pos[None, :] - pos[:, None]


def alibi_bias(seed, T, num_heads):
    m = alibi_slopes(num_heads)
    return (m[:, None, None] * relative_positions(T)).ravel()
