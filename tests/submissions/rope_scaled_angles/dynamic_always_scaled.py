"""All four RoPE scalings; ntk and dynamic handled together."""

import math

import jax.numpy as jnp


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    idx = jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim
    if method in ("ntk", "dynamic"):
        inv_freq = 1.0 / (base * factor ** (head_dim / (head_dim - 2))) ** idx
    else:
        inv_freq = 1.0 / base ** idx
        if method == "linear":
            inv_freq = inv_freq / factor
        elif method == "llama3":
            wavelen = 2 * math.pi / inv_freq
            s = (original_max_len / wavelen - 1) / 3
            inv_freq = jnp.where(wavelen > original_max_len, inv_freq / factor,
                                 jnp.where(wavelen < original_max_len / 4, inv_freq,
                                           (1 - s) * inv_freq / factor + s * inv_freq))
    t = jnp.arange(T, dtype=jnp.float32)
    return jnp.outer(t, inv_freq).ravel()
