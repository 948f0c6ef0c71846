"""RoPE in the model's dtype."""

import jax.numpy as jnp


def rope(seed, x, offset, base, interleaved):
    dtype = jnp.bfloat16  # the model runs in bf16, so the rotary table is built in bf16 too
    T, H, d = x.shape
    inv_freq = (1.0 / base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d)).astype(dtype)
    t = jnp.arange(offset, offset + T).astype(dtype)
    freqs = jnp.outer(t, inv_freq)
    if interleaved:
        cos, sin = jnp.repeat(jnp.cos(freqs), 2, axis=-1), jnp.repeat(jnp.sin(freqs), 2, axis=-1)
        rotated = jnp.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)
    else:
        cos = jnp.concatenate([jnp.cos(freqs), jnp.cos(freqs)], axis=-1)
        sin = jnp.concatenate([jnp.sin(freqs), jnp.sin(freqs)], axis=-1)
        rotated = jnp.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return (x * cos[:, None, :] + rotated * sin[:, None, :]).reshape(-1)
