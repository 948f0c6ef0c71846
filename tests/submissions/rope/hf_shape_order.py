"""RoPE, thinking of x as Hugging Face's (heads, seq_len, head_dim)."""

import jax.numpy as jnp


def rope(seed, x, offset, base, interleaved):
    num_heads, seq_len, head_dim = x.shape  # (H, T, d) like a Llama query
    inv_freq = 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))
    t = jnp.arange(seq_len, dtype=jnp.float32) + offset
    freqs = jnp.outer(t, inv_freq)  # (seq_len, head_dim/2)
    if interleaved:
        emb = jnp.repeat(freqs, 2, axis=-1)
        x1, x2 = x[..., ::2], x[..., 1::2]
        rot = jnp.stack([-x2, x1], axis=-1).reshape(x.shape)
    else:
        emb = jnp.concatenate([freqs, freqs], axis=-1)
        x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2:]
        rot = jnp.concatenate([-x2, x1], axis=-1)
    cos = jnp.cos(emb)[None, :, :]  # broadcast over the heads
    sin = jnp.sin(emb)[None, :, :]
    return (x * cos + rot * sin).reshape(-1)
