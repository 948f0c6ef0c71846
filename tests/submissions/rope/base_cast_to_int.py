"""RoPE with the stub's helpers; rope_theta read the way a config stores it, as an int."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    theta = int(base)  # rope_theta is 10000 or 500000 in every config
    return 1.0 / (theta ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))


def angles(T, offset, d, base):
    return jnp.arange(offset, offset + T, dtype=jnp.float32)[:, None] * inverse_frequencies(d, base)[None, :]


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
        cos, sin, r = jnp.concatenate([jnp.cos(a)] * 2, -1), jnp.concatenate([jnp.sin(a)] * 2, -1), rotate_half(x)
    return (x * cos[:, None, :] + r * sin[:, None, :]).reshape(-1)
