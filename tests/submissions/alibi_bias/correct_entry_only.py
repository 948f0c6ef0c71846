"""ALiBi bias, everything in the entry (the helpers are left as they were)."""

import jax.numpy as jnp


def alibi_slopes(num_heads):
    raise NotImplementedError


def relative_positions(T):
    raise NotImplementedError


def alibi_bias(seed, T, num_heads):
    c = 1
    while c * 2 <= num_heads:
        c *= 2
    powers = list(range(1, c + 1))  # m_h = (2^(-8/c))^(h+1)
    slopes = [2.0 ** (-8.0 * p / c) for p in powers]
    slopes += [2.0 ** (-4.0 * (2 * j + 1) / c) for j in range(num_heads - c)]
    m = jnp.array(slopes, dtype=jnp.float32).reshape(num_heads, 1, 1)
    i = jnp.arange(T).reshape(1, T, 1)
    j = jnp.arange(T).reshape(1, 1, T)
    return (m * (j - i)).reshape(-1)
