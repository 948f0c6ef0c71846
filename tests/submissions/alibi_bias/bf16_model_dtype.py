"""ALiBi bias."""

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
    dtype = jnp.bfloat16  # the model runs in bfloat16, so the bias is built in it too
    slopes = alibi_slopes(num_heads).astype(dtype)
    rel = relative_positions(T).astype(dtype)
    bias = slopes[:, None, None] * rel[None, :, :]
    return bias.astype(jnp.float32).reshape(-1)
