"""RoPE with the stub's helpers; the frequencies kept as a bfloat16 buffer, like the model's weights."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    inv = 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))
    return inv.astype(jnp.bfloat16)  # stored with the model's dtype


def angles(T, offset, d, base):
    pos = jnp.arange(offset, offset + T, dtype=jnp.float32)
    return pos[:, None] * inverse_frequencies(d, base).astype(jnp.float32)[None, :]


def rotate_half(x):
    x1, x2 = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([-x2, x1], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    a = angles(T, offset, d, base)
    if interleaved:
        cos, sin, r = jnp.repeat(jnp.cos(a), 2, -1), jnp.repeat(jnp.sin(a), 2, -1), rotate_pairs(x)
    else:
        cos, sin, r = jnp.tile(jnp.cos(a), 2), jnp.tile(jnp.sin(a), 2), rotate_half(x)
    return (x * cos[:, None, :] + r * sin[:, None, :]).reshape(-1)
