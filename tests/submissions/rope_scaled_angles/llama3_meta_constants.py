"""Copied Meta's apply_scaling for llama3 (llama-models), the rest by hand."""

import math

import jax.numpy as jnp
import numpy as np


def apply_scaling(freqs):
    scale_factor = 8
    low_freq_factor = 1
    high_freq_factor = 4
    old_context_len = 8192  # original llama3 length
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new_freqs = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new_freqs.append(freq)
        elif wavelen > low_freq_wavelen:
            new_freqs.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return np.array(new_freqs)


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    base, factor = float(base), float(factor)
    freqs = 1.0 / (base ** (np.arange(0, head_dim, 2)[: head_dim // 2] / head_dim))
    if method == "linear":
        freqs = freqs / factor
    elif method == "ntk":
        freqs = 1.0 / ((base * factor ** (head_dim / (head_dim - 2))) ** (np.arange(0, head_dim, 2) / head_dim))
    elif method == "dynamic" and T > original_max_len:
        a = factor * T / original_max_len - (factor - 1)
        freqs = 1.0 / ((base * a ** (head_dim / (head_dim - 2))) ** (np.arange(0, head_dim, 2) / head_dim))
    elif method == "llama3":
        freqs = apply_scaling(freqs)
    t = np.arange(T)
    return jnp.asarray(np.outer(t, freqs), dtype=jnp.float32).reshape(-1)
