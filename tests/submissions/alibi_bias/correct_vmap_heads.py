"""ALiBi bias, one head at a time with vmap."""

import math

import jax
import jax.numpy as jnp


def alibi_slopes(num_heads):
    c = 2 ** math.floor(math.log2(num_heads))
    k = jnp.arange(num_heads, dtype=jnp.float32)
    # the first c heads: 8 (h + 1) / c; the rest: 4 (2 (h - c) + 1) / c
    exponent = jnp.where(k < c, 8.0 * (k + 1) / c, 4.0 * (2 * (k - c) + 1) / c)
    return jnp.exp2(-exponent)


def relative_positions(T):
    pos = jnp.arange(T)
    return pos[None, :] - pos[:, None]


def alibi_bias(seed, T, num_heads):
    grid = relative_positions(T).astype(jnp.float32)
    one_head = lambda m: m * grid  # noqa: E731
    return jax.vmap(one_head)(alibi_slopes(num_heads)).reshape(-1)
