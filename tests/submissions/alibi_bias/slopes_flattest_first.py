"""ALiBi bias; head 0 gets the gentlest slope."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    c = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * (h + 1) / c) for h in range(c)]
    slopes += [2 ** (-4 * (2 * j + 1) / c) for j in range(num_heads - c)]
    return jnp.asarray(slopes[::-1], jnp.float32)  # head 0 looks farthest


def relative_positions(T):
    pos = jnp.arange(T)
    return pos[None, :] - pos[:, None]


def alibi_bias(seed, T, num_heads):
    return (alibi_slopes(num_heads)[:, None, None] * relative_positions(T)).reshape(-1)
