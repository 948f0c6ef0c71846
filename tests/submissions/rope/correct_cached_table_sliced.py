"""RoPE with a cos/sin cache for every position up to the last one, sliced at the offset."""

import jax.numpy as jnp


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    max_positions = offset + T
    inv_freq = 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))
    freqs = jnp.arange(max_positions, dtype=jnp.float32)[:, None] * inv_freq[None, :]
    cos_cached, sin_cached = jnp.cos(freqs), jnp.sin(freqs)  # (max_positions, d/2)
    cos, sin = cos_cached[offset:offset + T], sin_cached[offset:offset + T]
    if interleaved:
        cos, sin = jnp.repeat(cos, 2, axis=1), jnp.repeat(sin, 2, axis=1)
        rot = jnp.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)
    else:
        cos, sin = jnp.concatenate([cos, cos], axis=1), jnp.concatenate([sin, sin], axis=1)
        rot = jnp.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return (x * cos[:, None, :] + rot * sin[:, None, :]).reshape(-1)
