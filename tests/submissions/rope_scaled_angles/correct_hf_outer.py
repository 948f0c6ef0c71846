"""Scaled RoPE angles, Hugging Face style: inv_freq, then an outer product with the position ids."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    return 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    inv_freq = inverse_frequencies(head_dim, base)
    if method == "linear":
        return inv_freq / factor
    if method == "llama3":
        wavelen = 2 * math.pi / inv_freq
        smooth = (original_max_len / wavelen - 1.0) / 3.0
        smoothed = (1 - smooth) * inv_freq / factor + smooth * inv_freq
        out = jnp.where(wavelen > original_max_len, inv_freq / factor, inv_freq)
        medium = (wavelen >= original_max_len / 4) & (wavelen <= original_max_len)
        return jnp.where(medium, smoothed, out)
    if method == "ntk":
        alpha = factor
    else:
        seq_len = max(seq_len, original_max_len)
        alpha = factor * seq_len / original_max_len - (factor - 1)
    return inverse_frequencies(head_dim, base * alpha ** (head_dim / (head_dim - 2)))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    inv_freq = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    return jnp.outer(jnp.arange(T, dtype=jnp.float32), inv_freq).reshape(-1)
