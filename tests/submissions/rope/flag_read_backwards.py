"""RoPE with the stub's helpers."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    return base ** (-(jnp.arange(0, d, 2).astype(jnp.float32)) / d)


def angles(T, offset, d, base):
    p = jnp.arange(T, dtype=jnp.float32) + offset
    return p[:, None] * inverse_frequencies(d, base)[None, :]


def rotate_half(x):
    x1, x2 = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([-x2, x1], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    a = angles(T, offset, d, base)
    if not interleaved:  # neighbours
        cos, sin = jnp.repeat(jnp.cos(a), 2, axis=-1), jnp.repeat(jnp.sin(a), 2, axis=-1)
        partner = rotate_pairs(x)
    else:  # halves
        cos = jnp.concatenate([jnp.cos(a), jnp.cos(a)], axis=-1)
        sin = jnp.concatenate([jnp.sin(a), jnp.sin(a)], axis=-1)
        partner = rotate_half(x)
    return (x * cos[:, None, :] + partner * sin[:, None, :]).reshape(-1)
