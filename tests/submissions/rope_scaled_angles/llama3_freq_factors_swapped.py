"""Port of HF's rope init functions, llama3 settings from a config dict."""

import math

import jax.numpy as jnp

LLAMA3 = {"low_freq_factor": 4.0, "high_freq_factor": 1.0}


def inverse_frequencies(head_dim, base):
    return 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    inv_freq = inverse_frequencies(head_dim, base)
    if method == "linear":
        return inv_freq / factor
    if method in ("ntk", "dynamic"):
        if method == "ntk":
            alpha = factor
        else:
            seq_len = max(seq_len, original_max_len)
            alpha = factor * seq_len / original_max_len - (factor - 1)
        return inverse_frequencies(head_dim, base * alpha ** (head_dim / (head_dim - 2)))
    low, high = LLAMA3["low_freq_factor"], LLAMA3["high_freq_factor"]
    low_freq_wavelen = original_max_len / low
    high_freq_wavelen = original_max_len / high
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = jnp.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (original_max_len / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return jnp.where(medium, smoothed, inv_freq_llama)


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    freqs = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    return (jnp.arange(T, dtype=jnp.float32)[:, None] * freqs[None, :]).reshape(-1)
