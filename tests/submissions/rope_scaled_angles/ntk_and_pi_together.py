"""RoPE scaling: frequencies in helpers, positions in the main function."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    return 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    if method == "linear":
        return inverse_frequencies(head_dim, base) / factor
    if method == "ntk":
        return inverse_frequencies(head_dim, base * factor ** (head_dim / (head_dim - 2)))
    if method == "dynamic":
        if seq_len > original_max_len:
            alpha = factor * seq_len / original_max_len - (factor - 1)
            return inverse_frequencies(head_dim, base * alpha ** (head_dim / (head_dim - 2)))
        return inverse_frequencies(head_dim, base)
    inv = inverse_frequencies(head_dim, base)
    wl = 2 * math.pi / inv
    smooth = (original_max_len / wl - 1) / 3
    return jnp.where(wl < original_max_len / 4, inv,
                     jnp.where(wl > original_max_len, inv / factor, (1 - smooth) * inv / factor + smooth * inv))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    freqs = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    positions = jnp.arange(T, dtype=jnp.float32)
    if method == "ntk":
        positions = positions / factor  # interpolate the positions too, like PI
    return (positions[:, None] * freqs[None, :]).reshape(-1)
