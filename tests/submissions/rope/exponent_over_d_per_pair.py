"""RoPE."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    i = jnp.arange(d // 2, dtype=jnp.float32)  # one frequency per pair
    return 1.0 / base ** (i / d)


def angles(T, offset, d, base):
    return (offset + jnp.arange(T, dtype=jnp.float32))[:, None] * inverse_frequencies(d, base)[None]


def rotate_half(x):
    n = x.shape[-1] // 2
    return jnp.concatenate([-x[..., n:], x[..., :n]], -1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., 0::2]], -1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    a = angles(T, offset, d, base)
    if interleaved:
        cos, sin, partner = jnp.repeat(jnp.cos(a), 2, -1), jnp.repeat(jnp.sin(a), 2, -1), rotate_pairs(x)
    else:
        cos, sin, partner = jnp.tile(jnp.cos(a), (1, 2)), jnp.tile(jnp.sin(a), (1, 2)), rotate_half(x)
    return (x * cos[:, None] + partner * sin[:, None]).ravel()
