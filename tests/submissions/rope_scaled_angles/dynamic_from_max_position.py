"""Scaled RoPE; dynamic NTK follows the largest position id, as in the HF cache update."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    return 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    if method == "linear":
        return inverse_frequencies(head_dim, base) / factor
    if method == "llama3":
        inv = inverse_frequencies(head_dim, base)
        wavelen = 2 * math.pi / inv
        smooth = (original_max_len / wavelen - 1) / (4 - 1)
        medium = (1 - smooth) * inv / factor + smooth * inv
        return jnp.where(wavelen < original_max_len / 4, inv, jnp.where(wavelen > original_max_len, inv / factor, medium))
    if method == "ntk":
        scale = factor
    else:
        seq_len = max(seq_len, original_max_len)
        scale = factor * seq_len / original_max_len - (factor - 1)
    return inverse_frequencies(head_dim, base * scale ** (head_dim / (head_dim - 2)))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    max_position_id = T - 1
    freqs = scaled_frequencies(head_dim, base, factor, original_max_len, method, max_position_id)
    return (jnp.arange(T, dtype=jnp.float32)[:, None] * freqs).reshape(-1)
