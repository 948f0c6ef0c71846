"""Scaled RoPE angles, everything in one function."""

import math

import jax.numpy as jnp


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    inv = 1.0 / base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim)
    pos = jnp.arange(T, dtype=jnp.float32)
    if method == "linear":
        pos = pos * factor  # stretch the positions by the extension factor
    elif method == "ntk":
        inv = 1.0 / (base * factor ** (head_dim / (head_dim - 2))) ** (jnp.arange(0, head_dim, 2) / head_dim)
    elif method == "dynamic":
        if T > original_max_len:
            a = factor * T / original_max_len - (factor - 1)
            inv = 1.0 / (base * a ** (head_dim / (head_dim - 2))) ** (jnp.arange(0, head_dim, 2) / head_dim)
    else:
        wl = 2 * math.pi / inv
        g = (original_max_len / wl - 1) / 3
        mid = (1 - g) * inv / factor + g * inv
        inv = jnp.where(wl < original_max_len / 4, inv, jnp.where(wl > original_max_len, inv / factor, mid))
    return jnp.outer(pos, inv).reshape(-1)
