"""Scaled RoPE angles; positions counted from 1."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    return 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    if method == "linear":
        return inverse_frequencies(head_dim, base) / factor
    if method == "llama3":
        w = inverse_frequencies(head_dim, base)
        lam = 2 * math.pi / w
        g = (original_max_len / lam - 1) / 3
        return jnp.where(lam < original_max_len / 4, w, jnp.where(lam > original_max_len, w / factor,
                                                                   (1 - g) * w / factor + g * w))
    if method == "dynamic" and seq_len <= original_max_len:
        return inverse_frequencies(head_dim, base)
    alpha = factor if method == "ntk" else factor * seq_len / original_max_len - (factor - 1)
    return inverse_frequencies(head_dim, base * alpha ** (head_dim / (head_dim - 2)))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    freqs = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    positions = jnp.arange(1, T + 1, dtype=jnp.float32)  # token 1 .. T
    return (positions[:, None] * freqs[None, :]).reshape(-1)
