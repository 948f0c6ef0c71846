"""Correct: Chen et al.'s position interpolation as the paper writes it (positions divided by the factor, the
frequencies untouched), frequencies in exp-log form (the PyTorch tutorial's div_term), dynamic NTK switched
on at T >= L (alpha is exactly 1 at T = L, so the switch there changes nothing), and llama3's three bands as
one blend weight clipped to [0, 1]."""

import math

import jax.numpy as jnp


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    """RoPE's angles p * w'_k under `method`, (T * head_dim // 2,) float32."""
    positions = jnp.arange(T, dtype=jnp.float32)  # (T,)
    pairs = jnp.arange(head_dim // 2, dtype=jnp.float32)  # (d/2,)
    ratio = head_dim / (head_dim - 2)
    log_base = jnp.log(jnp.asarray(base, jnp.float32))
    if method == "ntk":
        log_base = log_base + ratio * jnp.log(factor)
    elif method == "dynamic" and T >= original_max_len:
        log_base = log_base + ratio * jnp.log(factor * T / original_max_len - (factor - 1.0))
    w = jnp.exp(pairs * (-2.0 * log_base / head_dim))  # (d/2,)
    if method == "linear":
        positions = positions / factor  # position p reads position p / s's angles
    elif method == "llama3":
        g = jnp.clip((original_max_len * w / (2.0 * math.pi) - 1.0) / 3.0, 0.0, 1.0)  # L / wavelength, banded
        w = w * (g + (1.0 - g) / factor)
    return (positions[:, None] * w[None, :]).reshape(-1)  # (T * d/2,)
