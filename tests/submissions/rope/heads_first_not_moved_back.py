"""RoPE: heads moved to the front, as Hugging Face lays out q and k."""

import jax.numpy as jnp


def rope(seed, x, offset, base, interleaved):
    q = jnp.transpose(x, (1, 0, 2))  # (H, T, d)
    H, T, d = q.shape
    inv_freq = 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))
    freqs = (jnp.arange(T, dtype=jnp.float32) + offset)[:, None] * inv_freq[None, :]  # (T, d/2)
    if interleaved:
        emb = jnp.repeat(freqs, 2, axis=-1)
        rot = jnp.stack([-q[..., 1::2], q[..., ::2]], axis=-1).reshape(q.shape)
    else:
        emb = jnp.concatenate([freqs, freqs], axis=-1)
        rot = jnp.concatenate([-q[..., d // 2:], q[..., : d // 2]], axis=-1)
    out = q * jnp.cos(emb)[None] + rot * jnp.sin(emb)[None]  # (H, T, d)
    return out.reshape(-1)
