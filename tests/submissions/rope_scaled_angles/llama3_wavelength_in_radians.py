"""Port of transformers' rope init functions (default, linear, dynamic, llama3)."""

import jax.numpy as jnp


def inverse_frequencies(head_dim, base):
    return 1.0 / (base ** (jnp.arange(0, head_dim, 2).astype(jnp.float32) / head_dim))


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    inv_freq = inverse_frequencies(head_dim, base)
    if method == "linear":
        return inv_freq / factor
    if method == "ntk":
        return inverse_frequencies(head_dim, base * factor ** (head_dim / (head_dim - 2)))
    if method == "dynamic":
        seq_len = seq_len if seq_len > original_max_len else original_max_len
        new_base = base * ((factor * seq_len / original_max_len) - (factor - 1)) ** (head_dim / (head_dim - 2))
        return inverse_frequencies(head_dim, new_base)
    low_freq_wavelen = original_max_len / 1.0
    high_freq_wavelen = original_max_len / 4.0
    wavelen = 1.0 / inv_freq
    inv_freq_llama = jnp.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (original_max_len / wavelen - 1.0) / (4.0 - 1.0)
    smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return jnp.where(is_medium, smoothed, inv_freq_llama)


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    inv_freq = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)
    position_ids = jnp.arange(T, dtype=jnp.float32)
    return (position_ids[:, None] * inv_freq[None, :]).reshape(-1)
