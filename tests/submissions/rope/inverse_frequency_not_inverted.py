"""RoPE."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    return base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d)


def angles(T, offset, d, base):
    return jnp.arange(offset, offset + T, dtype=jnp.float32)[:, None] * inverse_frequencies(d, base)[None, :]


def rotate_half(x):
    a, b = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([-b, a], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    theta = angles(T, offset, d, base)
    if interleaved:
        cos, sin, part = jnp.repeat(jnp.cos(theta), 2, -1), jnp.repeat(jnp.sin(theta), 2, -1), rotate_pairs(x)
    else:
        cos, sin, part = jnp.tile(jnp.cos(theta), 2), jnp.tile(jnp.sin(theta), 2), rotate_half(x)
    return (x * cos[:, None, :] + part * sin[:, None, :]).reshape(-1)
