"""ALiBi bias: m_h = 1 / 2^(8h / H)."""

import jax.numpy as jnp


def alibi_slopes(num_heads):
    h = jnp.arange(num_heads, dtype=jnp.float32)
    return 1.0 / (2.0 ** (8.0 * h / num_heads))


def relative_positions(T):
    pos = jnp.arange(T)
    return pos[None, :] - pos[:, None]


def alibi_bias(seed, T, num_heads):
    return (alibi_slopes(num_heads)[:, None, None] * relative_positions(T)).reshape(-1)
