"""RoPE angle table with PI / NTK / dynamic NTK / llama3 scaling."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    return 1.0 / jnp.power(base, jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim)


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    exponent = head_dim / (head_dim - 2)
    if method == "linear":
        return inverse_frequencies(head_dim, base) / factor
    if method == "ntk":
        return inverse_frequencies(head_dim, base * jnp.power(factor, exponent))
    if method == "dynamic":
        # the scale grows with the sequence length
        alpha = factor * seq_len / original_max_len - (factor - 1)
        return inverse_frequencies(head_dim, base * jnp.power(alpha, exponent))
    w = inverse_frequencies(head_dim, base)
    lam = 2 * math.pi / w
    g = (original_max_len / lam - 1) / 3
    keep = lam < original_max_len / 4
    div = lam > original_max_len
    return jnp.where(keep, w, jnp.where(div, w / factor, (1 - g) * w / factor + g * w))


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    w = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    return (jnp.arange(T, dtype=jnp.float32)[:, None] * w[None, :]).reshape(-1)
