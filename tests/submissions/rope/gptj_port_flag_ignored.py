"""RoPE, ported from GPT-J's rotary code."""

import jax.numpy as jnp


def rotate_every_two(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    x = jnp.stack((-x2, x1), axis=-1)
    return x.reshape(x.shape[:-2] + (-1,))


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    inv_freq = 1.0 / (base ** (jnp.arange(0, d, 2) / d))
    sinusoid_inp = jnp.einsum("i,j->ij", jnp.arange(offset, offset + T, dtype=jnp.float32), inv_freq)
    sin = jnp.repeat(jnp.sin(sinusoid_inp), 2, axis=-1)[:, None, :]
    cos = jnp.repeat(jnp.cos(sinusoid_inp), 2, axis=-1)[:, None, :]
    return (x * cos + rotate_every_two(x) * sin).reshape(-1)
