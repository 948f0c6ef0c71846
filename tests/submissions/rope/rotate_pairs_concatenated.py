"""RoPE with the stub's helpers."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    return base ** (-jnp.arange(0, d, 2, dtype=jnp.float32) / d)


def angles(T, offset, d, base):
    return jnp.outer(offset + jnp.arange(T, dtype=jnp.float32), inverse_frequencies(d, base))


def rotate_half(x):
    x1, x2 = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([-x2, x1], axis=-1)


def rotate_pairs(x):
    even, odd = x[..., ::2], x[..., 1::2]
    return jnp.concatenate([-odd, even], axis=-1)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    a = angles(T, offset, d, base)
    if interleaved:
        cos, sin = jnp.repeat(jnp.cos(a), 2, axis=-1), jnp.repeat(jnp.sin(a), 2, axis=-1)
        return (x * cos[:, None] + rotate_pairs(x) * sin[:, None]).reshape(-1)
    cos, sin = jnp.concatenate([jnp.cos(a), jnp.cos(a)], -1), jnp.concatenate([jnp.sin(a), jnp.sin(a)], -1)
    return (x * cos[:, None] + rotate_half(x) * sin[:, None]).reshape(-1)
