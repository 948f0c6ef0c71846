"""ALiBi bias."""

import jax.numpy as jnp


def alibi_slopes(num_heads):
    c = 1
    while c * 2 <= num_heads:
        c *= 2
    slopes = []
    for h in range(c):
        slopes.append(2 ** (-8 * h / c))
    for j in range(num_heads - c):
        slopes.append(2 ** (-4 * (2 * j + 1) / c))
    return jnp.array(slopes, dtype=jnp.float32)


def relative_positions(T):
    q = jnp.arange(T)[:, None]
    k = jnp.arange(T)[None, :]
    return k - q


def alibi_bias(seed, T, num_heads):
    slopes = alibi_slopes(num_heads)
    dist = relative_positions(T).astype(jnp.float32)
    return jnp.einsum("h,ij->hij", slopes, dist).reshape(-1)
