"""Scaled RoPE angles; dynamic NTK switched on from T = L (alpha is 1 there anyway), clamped with jnp."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    return jnp.power(base, -jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim)


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    if method == "linear":
        return inverse_frequencies(head_dim, base) / factor
    if method == "llama3":
        w = inverse_frequencies(head_dim, base)
        ratio = original_max_len * w / (2 * math.pi)  # L / wavelength
        g = jnp.clip((ratio - 1.0) / 3.0, 0.0, 1.0)
        return g * w + (1.0 - g) * w / factor
    if method == "dynamic" and seq_len < original_max_len:
        return inverse_frequencies(head_dim, base)
    if method == "ntk":
        alpha = factor
    else:
        alpha = jnp.maximum(1.0, factor * seq_len / original_max_len - (factor - 1))
    return inverse_frequencies(head_dim, base * alpha ** (head_dim / (head_dim - 2)))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    freqs = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    return (jnp.arange(T, dtype=jnp.float32)[:, None] * freqs[None, :]).reshape(-1)
