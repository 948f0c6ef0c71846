"""ALiBi bias; the slopes are kept in the model's dtype, the bias in float32."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    c = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * (h + 1) / c) for h in range(c)]
    slopes += [2 ** (-4 * (2 * j + 1) / c) for j in range(num_heads - c)]
    return jnp.asarray(slopes, dtype=jnp.bfloat16)  # a buffer of the bfloat16 model


def relative_positions(T):
    pos = jnp.arange(T)
    return pos[None, :] - pos[:, None]


def alibi_bias(seed, T, num_heads):
    slopes = alibi_slopes(num_heads).astype(jnp.float32)
    return (slopes[:, None, None] * relative_positions(T).astype(jnp.float32)).reshape(-1)
