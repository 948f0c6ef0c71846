"""Correct: Hugging Face transformers' rope initialisation functions (modeling_rope_utils.py), ported to jnp in
float32: the default inverse frequencies `1 / base ** (arange(0, dim, 2) / dim)`; linear scaling divides them
by the factor; dynamic NTK raises the base by ((factor * seq_len / max_len) - (factor - 1)) ** (dim / (dim - 2))
with seq_len no shorter than max_len; llama3 keeps, divides or blends them by wavelength. Hugging Face has no
type for static NTK-aware scaling: its dynamic formula reproduces it with max_len = 1, seq_len = 2 and
factor - 1 for the factor, since 2 (s - 1) - (s - 2) = s."""

import math

import jax.numpy as jnp


def _default_inv_freq(dim, base):
    return 1.0 / (base ** (jnp.arange(0, dim, 2, dtype=jnp.int32).astype(jnp.float32) / dim))


def _linear_scaling(dim, base, factor):
    inv_freq = _default_inv_freq(dim, base)
    inv_freq /= factor  # "originally, scaling was applied to the position_ids"
    return inv_freq


def _dynamic_ntk(dim, base, factor, max_position_embeddings, seq_len):
    seq_len = seq_len if seq_len > max_position_embeddings else max_position_embeddings
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    return _default_inv_freq(dim, base)


def _llama3(dim, base, factor, old_context_len, low_freq_factor=1.0, high_freq_factor=4.0):
    inv_freq = _default_inv_freq(dim, base)
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = jnp.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return jnp.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    """RoPE's angles p * w'_k under `method`, (T * head_dim // 2,) float32: HF's `freqs`, position_ids times
    inv_freq."""
    if method == "linear":
        inv_freq = _linear_scaling(head_dim, base, factor)
    elif method == "ntk":
        inv_freq = _dynamic_ntk(head_dim, base, factor - 1.0, max_position_embeddings=1, seq_len=2)
    elif method == "dynamic":
        inv_freq = _dynamic_ntk(head_dim, base, factor, original_max_len, seq_len=T)
    else:
        inv_freq = _llama3(head_dim, base, factor, original_max_len)
    position_ids = jnp.arange(T, dtype=jnp.float32)
    freqs = position_ids[:, None] * inv_freq[None, :]  # (T, d/2)
    return freqs.reshape(-1)
