"""Correct: the two Hugging Face implementations ported to JAX, one per layout.

Half-split, as in Hugging Face's Llama: the angles duplicated as two halves (cat(freqs, freqs)), the helper
rotate_half giving (-x2, x1), and cos and sin given a head axis before they multiply (HF's unsqueeze_dim:
its queries are (batch, heads, positions, features); here x is (positions, heads, features), so the new axis
goes between the positions and the features). Interleaved, as in Hugging Face's GPT-J: each sine and cosine
repeated twice side by side (repeat_interleave), and rotate_every_two giving (-x_(2k+1), x_2k) side by side.
"""

import jax.numpy as jnp


def rotate_half(x):
    """Hugging Face Llama's rotate_half: the second half negated, moved in front of the first."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return jnp.concatenate((-x2, x1), axis=-1)


def rotate_every_two(x):
    """Hugging Face GPT-J's rotate_every_two: within each neighbouring pair, (-odd, even)."""
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return jnp.stack((-x2, x1), axis=-1).reshape(x.shape)


def llama_rotary(x, offset, base):
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))  # (d/2,)
    position_ids = jnp.arange(x.shape[0], dtype=jnp.float32) + offset  # (T,)
    freqs = position_ids[:, None] * inv_freq[None, :]  # (T, d/2)
    emb = jnp.concatenate((freqs, freqs), axis=-1)  # (T, d)
    cos = jnp.expand_dims(jnp.cos(emb), 1)  # (T, 1, d): the head axis after the positions
    sin = jnp.expand_dims(jnp.sin(emb), 1)
    return x * cos + rotate_half(x) * sin


def gptj_rotary(x, offset, base):
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))  # (d/2,)
    sinusoid_inp = jnp.einsum("i,j->ij", jnp.arange(x.shape[0], dtype=jnp.float32) + offset, inv_freq)  # (T, d/2)
    sin = jnp.repeat(jnp.sin(sinusoid_inp), 2, axis=-1)[:, None, :]  # (T, 1, d): s0 s0 s1 s1 ..
    cos = jnp.repeat(jnp.cos(sinusoid_inp), 2, axis=-1)[:, None, :]
    return x * cos + rotate_every_two(x) * sin


def rope(seed, x, offset, base, interleaved):
    """RoPE of x (T, H, d) at positions offset .. offset + T - 1, (T * H * d,) float32."""
    out = gptj_rotary(x, offset, base) if interleaved else llama_rotary(x, offset, base)
    return out.reshape(-1)  # (T * H * d,)
