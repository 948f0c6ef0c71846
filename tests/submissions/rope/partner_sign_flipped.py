"""RoPE with helpers."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    return base ** (-jnp.arange(0, d, 2, dtype=jnp.float32) / d)


def angles(T, offset, d, base):
    pos = jnp.arange(offset, offset + T, dtype=jnp.float32)
    return pos[:, None] * inverse_frequencies(d, base)


def rotate_half(x):
    a, b = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([b, -a], axis=-1)


def rotate_pairs(x):
    a, b = x[..., ::2], x[..., 1::2]
    return jnp.stack([b, -a], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    ang = angles(T, offset, d, base)
    if interleaved:
        c = jnp.repeat(jnp.cos(ang), 2, axis=-1)
        s = jnp.repeat(jnp.sin(ang), 2, axis=-1)
        r = rotate_pairs(x)
    else:
        c = jnp.tile(jnp.cos(ang), 2)
        s = jnp.tile(jnp.sin(ang), 2)
        r = rotate_half(x)
    return (x * c[:, None, :] + r * s[:, None, :]).reshape(-1)
