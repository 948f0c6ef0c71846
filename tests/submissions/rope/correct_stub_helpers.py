"""RoPE with the stub's helpers, frequencies through exp and log."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    k = jnp.arange(d // 2, dtype=jnp.float32)
    return jnp.exp(-(2.0 * k / d) * jnp.log(base))


def angles(T, offset, d, base):
    return jnp.outer(jnp.arange(T, dtype=jnp.float32) + offset, inverse_frequencies(d, base))


def rotate_half(x):
    d = x.shape[-1]
    return jnp.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)


def rotate_pairs(x):
    pairs = x.reshape(x.shape[:-1] + (-1, 2))  # (..., d/2, 2)
    return jnp.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    a = angles(T, offset, d, base)
    spread = (lambda v: jnp.repeat(v, 2, axis=-1)) if interleaved else (lambda v: jnp.tile(v, (1, 2)))
    partner = rotate_pairs(x) if interleaved else rotate_half(x)
    return (x * spread(jnp.cos(a))[:, None, :] + partner * spread(jnp.sin(a))[:, None, :]).reshape(-1)
