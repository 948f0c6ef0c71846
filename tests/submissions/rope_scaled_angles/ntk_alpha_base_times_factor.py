"""RoPE context extension: PI, NTK, dynamic NTK, llama3."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    k = jnp.arange(head_dim // 2, dtype=jnp.float32)
    return jnp.power(base, -2.0 * k / head_dim)


def _ntk_base(base, alpha, head_dim):
    # NTK-aware: stretch the base by the scale (alpha)
    return base * alpha


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    if method == "linear":
        return inverse_frequencies(head_dim, base) / factor
    if method == "ntk":
        return inverse_frequencies(head_dim, _ntk_base(base, factor, head_dim))
    if method == "dynamic":
        if seq_len <= original_max_len:
            return inverse_frequencies(head_dim, base)
        alpha = factor * seq_len / original_max_len - (factor - 1)
        return inverse_frequencies(head_dim, _ntk_base(base, alpha, head_dim))
    w = inverse_frequencies(head_dim, base)
    wavelength = 2 * math.pi / w
    g = (original_max_len / wavelength - 1) / 3
    return jnp.where(wavelength < original_max_len / 4, w,
                     jnp.where(wavelength > original_max_len, w / factor, (1 - g) * w / factor + g * w))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    w = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    return (jnp.arange(T, dtype=jnp.float32)[:, None] * w[None, :]).reshape(-1)
