"""One pair's frequency as a function of k, vmapped over the pairs; the table vmapped over positions."""

import math

import jax
import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    def one(k):
        return 1.0 / base ** (2.0 * k / head_dim)
    return jax.vmap(one)(jnp.arange(head_dim // 2, dtype=jnp.float32))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    L = original_max_len
    if method == "ntk":
        return inverse_frequencies(head_dim, base * factor ** (head_dim / (head_dim - 2)))
    if method == "dynamic":
        if seq_len <= L:
            return inverse_frequencies(head_dim, base)
        alpha = factor * seq_len / L - (factor - 1)
        return inverse_frequencies(head_dim, base * alpha ** (head_dim / (head_dim - 2)))

    def one(w):
        if method == "linear":
            return w / factor
        wavelength = 2 * math.pi / w
        g = (L / wavelength - 1) / 3
        return jnp.where(wavelength < L / 4, w, jnp.where(wavelength > L, w / factor, (1 - g) * w / factor + g * w))
    return jax.vmap(one)(inverse_frequencies(head_dim, base))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    w = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    rows = jax.vmap(lambda p: p * w)(jnp.arange(T, dtype=jnp.float32))  # (T, d/2)
    return rows.reshape(-1)
