"""RoPE, frequencies as in the paper: theta_i = 10000^(-2(i-1)/d)... with i = 1 .. d/2."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    i = jnp.arange(1, d // 2 + 1, dtype=jnp.float32)
    return base ** (-2.0 * i / d)


def angles(T, offset, d, base):
    m = offset + jnp.arange(T, dtype=jnp.float32)
    return m[:, None] * inverse_frequencies(d, base)[None, :]


def rotate_half(x):
    h = x.shape[-1] // 2
    return jnp.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def rotate_pairs(x):
    return jnp.stack([-x[..., 1::2], x[..., ::2]], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    a = angles(T, offset, d, base)
    if interleaved:
        c, s, r = jnp.repeat(jnp.cos(a), 2, -1), jnp.repeat(jnp.sin(a), 2, -1), rotate_pairs(x)
    else:
        c, s, r = jnp.concatenate([jnp.cos(a)] * 2, -1), jnp.concatenate([jnp.sin(a)] * 2, -1), rotate_half(x)
    return (x * c[:, None, :] + r * s[:, None, :]).reshape(-1)
