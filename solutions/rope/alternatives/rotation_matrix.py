"""Correct: the paper's rotation matrix R^d_(Theta, p), one (d, d) matrix per position, applied with einsum.

R is block-diagonal with a 2x2 rotation [[cos, -sin], [sin, cos]] on each pair: on features (2k, 2k + 1)
interleaved, on (k, k + d/2) half-split (the same matrix with its rows and columns reordered). Wasteful (d^2
values for d of them), which is why no library computes it this way, but it is the definition.
"""

import jax.numpy as jnp


def rope(seed, x, offset, base, interleaved):
    """RoPE of x (T, H, d) at positions offset .. offset + T - 1, (T * H * d,) float32."""
    T, H, d = x.shape
    k = jnp.arange(d // 2)
    first, second = (2 * k, 2 * k + 1) if interleaved else (k, k + d // 2)  # (d/2,) each: the pairs' features
    theta = base ** (-2.0 * k.astype(jnp.float32) / d)  # (d/2,)
    phi = (offset + jnp.arange(T, dtype=jnp.float32))[:, None] * theta  # (T, d/2)
    c, s = jnp.cos(phi), jnp.sin(phi)
    R = jnp.zeros((T, d, d), jnp.float32)  # (T, d, d): R[t] turns a row of x at position offset + t
    R = R.at[:, first, first].set(c).at[:, first, second].set(-s)
    R = R.at[:, second, first].set(s).at[:, second, second].set(c)
    return jnp.einsum("tij,thj->thi", R, x).reshape(-1)  # (T * H * d,)
