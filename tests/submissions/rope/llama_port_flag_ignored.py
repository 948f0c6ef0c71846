"""RoPE as in Hugging Face's modeling_llama."""

import jax.numpy as jnp


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return jnp.concatenate((-x2, x1), axis=-1)


def rope(seed, x, offset, base, interleaved):
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (jnp.arange(0, dim, 2, dtype=jnp.float32) / dim))
    position_ids = jnp.arange(x.shape[0], dtype=jnp.float32) + offset
    freqs = jnp.outer(position_ids, inv_freq)
    emb = jnp.concatenate((freqs, freqs), axis=-1)
    cos = jnp.cos(emb)[:, None, :]  # unsqueeze the head dim
    sin = jnp.sin(emb)[:, None, :]
    q_embed = (x * cos) + (rotate_half(x) * sin)
    return q_embed.reshape(-1)
