"""Position interpolation as the paper writes it: positions scaled by L / L' = 1 / factor."""

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
    if method == "ntk":
        alpha = factor
    elif seq_len > original_max_len:
        alpha = factor * seq_len / original_max_len - (factor - 1)
    else:
        return inverse_frequencies(head_dim, base)
    return inverse_frequencies(head_dim, base * alpha ** (head_dim / (head_dim - 2)))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    if method == "linear":
        w = inverse_frequencies(head_dim, base)
        positions = jnp.arange(T, dtype=jnp.float32) * (1.0 / factor)  # L / L'
    else:
        w = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
        positions = jnp.arange(T, dtype=jnp.float32)
    return (positions[:, None] * w[None, :]).reshape(-1)
