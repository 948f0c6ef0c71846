"""RoPE, everything in the entry with index arrays (the helpers are left as they were)."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    raise NotImplementedError


def angles(T, offset, d, base):
    raise NotImplementedError


def rotate_half(x):
    raise NotImplementedError


def rotate_pairs(x):
    raise NotImplementedError


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    j = jnp.arange(d)
    if interleaved:
        pair = j // 2  # which pair each feature belongs to
        partner = j ^ 1  # its neighbour
        sign = jnp.where(j % 2 == 0, -1.0, 1.0)  # the first of a pair takes -other
    else:
        pair = j % (d // 2)
        partner = (j + d // 2) % d
        sign = jnp.where(j < d // 2, -1.0, 1.0)
    theta = base ** (-2.0 * pair.astype(jnp.float32) / d)  # (d,)
    phi = (offset + jnp.arange(T, dtype=jnp.float32))[:, None] * theta[None, :]  # (T, d)
    out = x * jnp.cos(phi)[:, None, :] + sign * x[..., partner] * jnp.sin(phi)[:, None, :]
    return out.reshape(-1)
