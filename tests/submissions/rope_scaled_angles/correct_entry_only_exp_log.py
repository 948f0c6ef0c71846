"""Everything in the entry; frequencies through exp and log, positions divided for linear (Chen et al.)."""

import math

import jax.numpy as jnp


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    k = jnp.arange(head_dim // 2, dtype=jnp.float32)
    log_base = jnp.log(base)
    if method == "ntk" or (method == "dynamic" and T > original_max_len):
        scale = factor if method == "ntk" else factor * T / original_max_len - (factor - 1)
        log_base = log_base + head_dim / (head_dim - 2) * jnp.log(scale)
    w = jnp.exp(-2.0 * k * log_base / head_dim)
    pos = jnp.arange(T, dtype=jnp.float32)
    if method == "linear":
        pos = pos / factor
    if method == "llama3":
        lam = 2 * math.pi / w
        g = (original_max_len / lam - 1) / 3
        w = jnp.where(lam < original_max_len / 4, w,
                      jnp.where(lam > original_max_len, w / factor, (1 - g) * w / factor + g * w))
    return (pos[:, None] * w[None, :]).reshape(-1)
