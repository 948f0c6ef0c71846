"""RoPE written once, half-split; the interleaved layout by reordering the features (evens first, then odds),
rotating, and putting them back, as Hugging Face's conversion of Meta's weights does."""

import jax.numpy as jnp
import numpy as np


def rotate_half(x):
    x1, x2 = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([-x2, x1], axis=-1)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    if interleaved:
        x = x[..., order]
    inv_freq = 1.0 / base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d)
    freqs = jnp.arange(offset, offset + T, dtype=jnp.float32)[:, None] * inv_freq
    emb = jnp.concatenate([freqs, freqs], axis=-1)[:, None, :]
    out = x * jnp.cos(emb) + rotate_half(x) * jnp.sin(emb)
    if interleaved:
        out = out[..., np.argsort(order)]
    return out.reshape(-1)
