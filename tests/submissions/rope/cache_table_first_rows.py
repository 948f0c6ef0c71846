"""RoPE with a precomputed angle table (as a model with a cache keeps one)."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    return 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))


def angles(T, offset, d, base):
    max_len = offset + T
    table = jnp.outer(jnp.arange(max_len, dtype=jnp.float32), inverse_frequencies(d, base))  # (max_len, d/2)
    return table[:T]


def rotate_half(x):
    h = x.shape[-1] // 2
    return jnp.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., ::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    a = angles(T, offset, d, base)
    if interleaved:
        cos, sin = jnp.repeat(jnp.cos(a), 2, axis=1), jnp.repeat(jnp.sin(a), 2, axis=1)
        y = x * cos[:, None, :] + rotate_pairs(x) * sin[:, None, :]
    else:
        cos, sin = jnp.concatenate([jnp.cos(a)] * 2, axis=1), jnp.concatenate([jnp.sin(a)] * 2, axis=1)
        y = x * cos[:, None, :] + rotate_half(x) * sin[:, None, :]
    return y.reshape(-1)
