"""RoPE."""

import jax.numpy as jnp


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    inv_freq = 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))
    freqs = jnp.outer(jnp.arange(offset, offset + T, dtype=jnp.float32), inv_freq)
    emb = jnp.repeat(freqs, 2, axis=-1) if interleaved else jnp.concatenate([freqs, freqs], axis=-1)
    cos, sin = jnp.cos(emb)[None], jnp.sin(emb)[None]  # unsqueeze(0) for the head dim
    if interleaved:
        rot = jnp.stack([-x[..., 1::2], x[..., ::2]], axis=-1).reshape(x.shape)
    else:
        rot = jnp.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return (x * cos + rot * sin).reshape(-1)
