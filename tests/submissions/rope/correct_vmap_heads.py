"""RoPE for one head, vmapped over the heads."""

import jax
import jax.numpy as jnp


def rotate_one_head(x, cos, sin, interleaved):
    # x: (T, d); cos, sin: (T, d/2)
    if interleaved:
        a, b = x[:, 0::2], x[:, 1::2]
        return jnp.stack([a * cos - b * sin, b * cos + a * sin], axis=-1).reshape(x.shape)
    a, b = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    inv = jnp.power(base, -jnp.arange(0, d, 2, dtype=jnp.float32) / d)
    theta = (jnp.arange(T, dtype=jnp.float32) + offset)[:, None] * inv
    one = lambda xh: rotate_one_head(xh, jnp.cos(theta), jnp.sin(theta), interleaved)  # noqa: E731
    per_head = jax.vmap(one, in_axes=1, out_axes=1)
    return per_head(x).reshape(-1)
