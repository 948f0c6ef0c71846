"""Correct alternative: the rotation as a multiplication by unit complex numbers.

A pair (a, b) is the complex number a + ib, and turning it by the angle phi is multiplying it by
exp(i phi) = cos phi + i sin phi. In the half-split layout the real parts are a head's first half of
features and the imaginary parts its second half; after the multiplication they go back to the same
halves. The attention is written with einsum, the causal mask as an additive (T, T) matrix of 0 and
the most negative float32.
"""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn


def turn(t, base):
    """(T, H, hd) -> the same: the pairs (k, k + hd/2) as complex numbers, times exp(i p theta_k)."""
    T, _, hd = t.shape
    half = hd // 2
    theta = jnp.power(base, -jnp.arange(half, dtype=jnp.float32) * 2.0 / hd)  # (hd/2,)
    phase = jnp.exp(1j * (jnp.arange(T, dtype=jnp.float32)[:, None] * theta))  # (T, hd/2) complex64
    z = jax.lax.complex(t[..., :half], t[..., half:]) * phase[:, None, :]  # (T, H, hd/2)
    return jnp.concatenate([jnp.real(z), jnp.imag(z)], axis=-1)


class RopeAttention(nn.Module):
    d_model: int
    num_heads: int
    base: float

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.k = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.v = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.o = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)

    def __call__(self, x):
        T, D = x.shape
        H = self.num_heads
        hd = D // H
        q = turn(self.q(x).reshape(T, H, hd), self.base)
        k = turn(self.k(x).reshape(T, H, hd), self.base)
        v = self.v(x).reshape(T, H, hd)
        future = jnp.triu(jnp.full((T, T), jnp.finfo(jnp.float32).min), k=1)  # (T, T): 0 on and below the diagonal
        scores = jnp.einsum("qhd,khd->hqk", q, k) / math.sqrt(hd) + future
        weights = jax.nn.softmax(scores, axis=-1)
        return self.o(jnp.einsum("hqk,khd->qhd", weights, v).reshape(T, D))


def rope_attention(seed, x, num_heads, base):
    """Initialises a RopeAttention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H, and D // H even.
        base: float > 1, RoPE's base.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = RopeAttention(int(x.shape[1]), int(num_heads), base)
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), jax.ShapeDtypeStruct(x.shape, x.dtype))
    return model.apply(variables, x).reshape(-1)  # (T * D,)
