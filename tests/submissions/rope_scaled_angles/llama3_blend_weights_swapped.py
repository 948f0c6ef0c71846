"""Scaled RoPE angles; llama3 mixes the interpolated and the original frequency."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    return 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    w = inverse_frequencies(head_dim, base)
    if method == "linear":
        return w / factor
    if method == "llama3":
        lam = 2 * math.pi / w
        g = (original_max_len / lam - 1) / 3
        mixed = g * w / factor + (1 - g) * w  # g weights the interpolated one
        return jnp.where(lam < original_max_len / 4, w, jnp.where(lam > original_max_len, w / factor, mixed))
    if method == "ntk":
        alpha = factor
    elif seq_len > original_max_len:
        alpha = factor * seq_len / original_max_len - (factor - 1)
    else:
        return w
    return inverse_frequencies(head_dim, base * alpha ** (head_dim / (head_dim - 2)))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    freqs = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    return (jnp.arange(T, dtype=jnp.float32)[:, None] * freqs[None, :]).reshape(-1)
