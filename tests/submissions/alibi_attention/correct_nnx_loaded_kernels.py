"""ALiBi self-attention written as a Flax NNX module.

The statement fixes the parameters: the kernels linen's lazy_init gives the stub's tree for the seed.
So the NNX layer loads them, like a checkpoint, into its own nnx.Linear layers named q, k, v and o.
"""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn
from flax import nnx

MASK_VALUE = jnp.finfo(jnp.float32).min


def alibi_slopes(num_heads):
    closest = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * (h + 1) / closest) for h in range(closest)]
    slopes += [2 ** (-4 * (2 * j + 1) / closest) for j in range(num_heads - closest)]
    return jnp.array(slopes, dtype=jnp.float32)


def alibi_bias(length, num_heads):
    pos = jnp.arange(length)
    return alibi_slopes(num_heads)[:, None, None] * (pos[None, :] - pos[:, None])[None]


class LinenTree(nn.Module):
    """Only there to make the statement's parameters: the stub's four kernels, by path."""

    d_model: int

    @nn.compact
    def __call__(self, x):
        return sum(nn.Dense(self.d_model, use_bias=False, name=name)(x) for name in ("q", "k", "v", "o"))


class AlibiAttention(nnx.Module):
    def __init__(self, d_model, num_heads, seed):
        self.num_heads = num_heads
        params = LinenTree(d_model).lazy_init(jax.random.PRNGKey(seed),
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
        q = self.q(x).reshape(T, H, hd)
        k = self.k(x).reshape(T, H, hd)
        v = self.v(x).reshape(T, H, hd)
        scores = jnp.einsum("qhd,khd->hqk", q, k) / math.sqrt(hd) + alibi_bias(T, H)
        scores = jnp.where(jnp.tril(jnp.ones((T, T), dtype=bool)), scores, MASK_VALUE)
        weights = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("hqk,khd->qhd", weights, v).reshape(T, D)
        return self.o(out)


def alibi_attention(seed, x, num_heads):
    x = jnp.asarray(x, dtype=jnp.float32)
    with jax.ensure_compile_time_eval():
        model = AlibiAttention(int(x.shape[1]), int(num_heads), int(seed))
    return model(x).reshape(-1)
