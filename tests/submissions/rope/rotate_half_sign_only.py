"""RoPE with the stub's helpers."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    return 1.0 / base ** (2.0 * jnp.arange(d // 2, dtype=jnp.float32) / d)


def angles(T, offset, d, base):
    return jnp.outer(jnp.arange(offset, offset + T, dtype=jnp.float32), inverse_frequencies(d, base))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return jnp.concatenate([x2, -x1], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., ::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    a = angles(x.shape[0], offset, x.shape[-1], base)
    expand = (lambda t: jnp.repeat(t, 2, axis=-1)) if interleaved else (lambda t: jnp.tile(t, (1, 2)))
    partner = rotate_pairs(x) if interleaved else rotate_half(x)
    return (x * expand(jnp.cos(a))[:, None] + partner * expand(jnp.sin(a))[:, None]).reshape(-1)
