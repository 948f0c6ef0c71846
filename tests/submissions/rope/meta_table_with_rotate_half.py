"""RoPE with the stub's helpers: one cos/sin table, two partners."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    return 1.0 / base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d)


def angles(T, offset, d, base):
    t = jnp.arange(T, dtype=jnp.float32) + offset
    return t[:, None] * inverse_frequencies(d, base)[None, :]


def rotate_half(x):
    half = x.shape[-1] // 2
    return jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., ::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    theta = angles(T, offset, d, base)
    # like Meta's freqs_cis: every angle used by two features
    cos = jnp.repeat(jnp.cos(theta), 2, axis=-1)
    sin = jnp.repeat(jnp.sin(theta), 2, axis=-1)
    rot = rotate_pairs(x) if interleaved else rotate_half(x)
    return (x * cos[:, None] + rot * sin[:, None]).reshape(-1)
