"""ALiBi bias; the slopes go from the steepest head to the flattest."""

import math

import jax.numpy as jnp


def alibi_slopes(num_heads):
    c = 2 ** int(math.log2(num_heads))
    first = [2.0 ** (-8.0 * (h + 1) / c) for h in range(c)]
    extra = [2.0 ** (-4.0 * (2 * j + 1) / c) for j in range(num_heads - c)]
    slopes = jnp.array(first + extra, dtype=jnp.float32)
    return jnp.sort(slopes)[::-1]  # 12 heads jumped back up after head 7: put them in order


def relative_positions(T):
    pos = jnp.arange(T)
    return pos[None, :] - pos[:, None]


def alibi_bias(seed, T, num_heads):
    bias = alibi_slopes(num_heads)[:, None, None] * relative_positions(T)[None, :, :]
    return bias.astype(jnp.float32).reshape(-1)
