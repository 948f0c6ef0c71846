"""RoPE."""

import jax.numpy as jnp

ROPE_THETA = 10000.0


def inverse_frequencies(d, base):
    return 1.0 / (ROPE_THETA ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))


def angles(T, offset, d, base):
    return jnp.arange(offset, offset + T, dtype=jnp.float32)[:, None] * inverse_frequencies(d, base)[None, :]


def rotate_half(x):
    return jnp.concatenate([-x[..., x.shape[-1] // 2:], x[..., : x.shape[-1] // 2]], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    a = angles(x.shape[0], offset, x.shape[-1], base)
    if interleaved:
        cos, sin = jnp.repeat(jnp.cos(a), 2, -1), jnp.repeat(jnp.sin(a), 2, -1)
        other = rotate_pairs(x)
    else:
        cos, sin = jnp.concatenate([jnp.cos(a), jnp.cos(a)], -1), jnp.concatenate([jnp.sin(a), jnp.sin(a)], -1)
        other = rotate_half(x)
    return (x * cos[:, None, :] + other * sin[:, None, :]).reshape(-1)
