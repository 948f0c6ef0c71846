"""RoPE: the cos/sin table built once, the Hugging Face way, for both layouts."""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    k = jnp.arange(d // 2, dtype=jnp.float32)
    return jnp.exp(-2.0 * k / d * jnp.log(base))


def angles(T, offset, d, base):
    return jnp.outer(offset + jnp.arange(T, dtype=jnp.float32), inverse_frequencies(d, base))


def rotate_half(x):
    x1, x2 = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([-x2, x1], axis=-1)


def rotate_pairs(x):
    even = x[..., 0::2]
    odd = x[..., 1::2]
    return jnp.stack([-odd, even], axis=-1).reshape(x.shape)


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    emb = jnp.concatenate([angles(T, offset, d, base)] * 2, axis=-1)  # (T, d)
    cos, sin = jnp.cos(emb)[:, None, :], jnp.sin(emb)[:, None, :]
    if interleaved:
        out = x * cos + rotate_pairs(x) * sin
    else:
        out = x * cos + rotate_half(x) * sin
    return out.reshape(-1)
