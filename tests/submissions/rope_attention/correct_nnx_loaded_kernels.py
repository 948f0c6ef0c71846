"""RoPE self-attention written as a Flax NNX module.

The statement fixes the parameters: the kernels that linen's lazy_init gives the stub's tree for the
seed. So the NNX layer makes them with a small linen tree of the same paths and copies them, like a
checkpoint, into its own nnx.Linear layers named q, k, v and o.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn
from flax import nnx

MASK_VALUE = jnp.finfo(jnp.float32).min


def apply_rope(x, offset, base, interleaved):
    T, _, d = x.shape
    theta = base ** (-np.arange(0, d, 2) / d)
    angle = (offset + np.arange(T))[:, None, None] * theta  # (T, 1, d/2)
    cos, sin = jnp.cos(angle), jnp.sin(angle)
    a, b = (x[..., 0::2], x[..., 1::2]) if interleaved else jnp.split(x, 2, axis=-1)
    a, b = a * cos - b * sin, b * cos + a * sin
    if interleaved:
        return jnp.stack([a, b], axis=-1).reshape(x.shape)
    return jnp.concatenate([a, b], axis=-1)


class StubTree(nn.Module):
    """Only there to make the statement's parameters: the stub's four kernels, by path."""

    d_model: int

    @nn.compact
    def __call__(self, x):
        return sum(nn.Dense(self.d_model, use_bias=False, name=name)(x) for name in ("q", "k", "v", "o"))


class RopeAttention(nnx.Module):
    def __init__(self, d_model, num_heads, base, seed):
        self.num_heads = num_heads
        self.base = base
        params = StubTree(d_model).lazy_init(jax.random.PRNGKey(seed),
                                             jax.ShapeDtypeStruct((1, d_model), jnp.float32))["params"]
        rngs = nnx.Rngs(seed)
        for name in ("q", "k", "v", "o"):
            layer = nnx.Linear(d_model, d_model, use_bias=False, rngs=rngs)
            layer.kernel.value = params[name]["kernel"]
            setattr(self, name, layer)

    def __call__(self, x):
        T, D = x.shape
        H = self.num_heads
        hd = D // H
        q = apply_rope(self.q(x).reshape(T, H, hd), 0, self.base, False)
        k = apply_rope(self.k(x).reshape(T, H, hd), 0, self.base, False)
        v = self.v(x).reshape(T, H, hd)
        scores = jnp.einsum("qhd,khd->hqk", q, k) / math.sqrt(hd)
        scores = jnp.where(jnp.tril(jnp.ones((T, T), dtype=bool)), scores, MASK_VALUE)
        weights = jax.nn.softmax(scores, axis=-1)
        return self.o(jnp.einsum("hqk,khd->qhd", weights, v).reshape(T, D))


def rope_attention(seed, x, num_heads, base):
    x = jnp.asarray(x, dtype=jnp.float32)
    with jax.ensure_compile_time_eval():
        model = RopeAttention(int(x.shape[1]), int(num_heads), base, int(seed))
    return model(x).reshape(-1)
