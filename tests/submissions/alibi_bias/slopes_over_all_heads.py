"""ALiBi bias, attempt 1."""

import jax.numpy as jnp


def alibi_slopes(num_heads):
    # one geometric sequence over all the heads: 2^(-8/H), 2^(-16/H), ..., 2^-8
    exponents = jnp.arange(1, num_heads + 1, dtype=jnp.float32) * (8.0 / num_heads)
    return jnp.exp2(-exponents)


def relative_positions(T):
    idx = jnp.arange(T)
    return idx[None, :] - idx[:, None]


def alibi_bias(seed, T, num_heads):
    slopes = alibi_slopes(num_heads)  # (H,)
    rel = relative_positions(T).astype(jnp.float32)  # (T, T)
    return (slopes[:, None, None] * rel[None]).reshape(-1)
