"""Scaled RoPE angles in log space (pow through exp/log)."""

import math

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    k = jnp.arange(head_dim // 2, dtype=jnp.float32)
    return jnp.exp(-2.0 * k / head_dim * jnp.log(base))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    log_base = jnp.log(jnp.asarray(base, jnp.float32))
    k = jnp.arange(head_dim // 2, dtype=jnp.float32)
    if method == "linear":
        return inverse_frequencies(head_dim, base) / factor
    if method == "llama3":
        w = inverse_frequencies(head_dim, base)
        lam = 2 * math.pi / w
        g = (original_max_len / lam - 1.0) / 3.0
        return jnp.where(lam < original_max_len / 4, w, jnp.where(lam > original_max_len, w / factor,
                                                                   (1 - g) * w / factor + g * w))
    if method == "ntk":
        scale = factor
    elif seq_len > original_max_len:
        scale = factor * seq_len / original_max_len - (factor - 1)
    else:
        return inverse_frequencies(head_dim, base)
    # log(base') = log(base) + exponent * log(scale)
    log_base = log_base + (head_dim - 2) / head_dim * jnp.log(scale)
    return jnp.exp(-2.0 * k / head_dim * log_base)


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    freqs = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    positions = jnp.arange(T, dtype=jnp.float32)
    return jnp.einsum("p,k->pk", positions, freqs).reshape(-1)
