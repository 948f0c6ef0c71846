"""RoPE."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    return base ** (-2.0 * jnp.arange(d // 2) / d)


def angles(T, offset, d, base):
    positions = jnp.arange(1, T + 1) + offset  # token positions
    return jnp.outer(positions, inverse_frequencies(d, base)).astype(jnp.float32)


def rotate_half(x):
    first, second = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([-second, first], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., ::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    a = angles(T, offset, d, base)
    layout = (lambda v: jnp.repeat(v, 2, axis=-1)) if interleaved else (lambda v: jnp.concatenate([v, v], axis=-1))
    partner = rotate_pairs(x) if interleaved else rotate_half(x)
    return (x * layout(jnp.cos(a))[:, None] + partner * layout(jnp.sin(a))[:, None]).reshape(-1)
