"""ALiBi bias: a linear penalty on the distance between query and key."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    c = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * (h + 1) / c) for h in range(c)]
    slopes += [2 ** (-4 * (2 * j + 1) / c) for j in range(num_heads - c)]
    return jnp.asarray(slopes, jnp.float32)


def relative_positions(T):
    pos = jnp.arange(T)
    return pos[None, :] - pos[:, None]


def alibi_bias(seed, T, num_heads):
    distance = jnp.abs(relative_positions(T)).astype(jnp.float32)  # how far apart
    bias = -alibi_slopes(num_heads)[:, None, None] * distance
    return bias.reshape(-1)
