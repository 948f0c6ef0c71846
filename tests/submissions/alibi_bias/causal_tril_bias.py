"""ALiBi bias for causal attention."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    c = 2 ** math.floor(math.log2(num_heads))
    first = 2.0 ** (-8.0 * jnp.arange(1, c + 1) / c)
    rest = 2.0 ** (-4.0 * jnp.arange(1, 2 * (num_heads - c), 2) / c)
    return jnp.concatenate([first, rest]).astype(jnp.float32)


def relative_positions(T):
    t = jnp.arange(T)
    return t[None, :] - t[:, None]


def alibi_bias(seed, T, num_heads):
    bias = alibi_slopes(num_heads)[:, None, None] * relative_positions(T)[None]
    bias = jnp.tril(bias)  # future keys are masked anyway
    return bias.astype(jnp.float32).reshape(-1)
