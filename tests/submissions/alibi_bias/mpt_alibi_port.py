"""ALiBi bias after Hugging Face MPT: its slopes, and its bias measured from the last key."""

import math

import jax.numpy as jnp


def alibi_bias(seed, T, num_heads):
    padded = 2 ** math.ceil(math.log2(num_heads))
    m = 2.0 ** (-jnp.arange(1, padded + 1, dtype=jnp.float32) * 8.0 / padded)
    if padded > num_heads:  # odd indices first, then the even ones, keep num_heads
        m = jnp.concatenate([m[1::2], m[0::2]])[:num_heads]
    offsets = jnp.arange(T, dtype=jnp.float32) - (T - 1)  # -(T-1) .. 0, the newest key at 0
    bias = m[:, None] * offsets[None, :]  # (H, T)
    return jnp.tile(bias[:, None, :], (1, T, 1)).reshape(-1)
