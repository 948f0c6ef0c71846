"""Correct alternative: Hugging Face BLOOM's ALiBi attention, ported to JAX on the stub's module tree.

BLOOM (transformers/models/bloom/modeling_bloom.py) builds its bias from the key positions alone:
`build_alibi_tensor` gives every head the row m_h * [0, 1, ..., T - 1], the same for every query, which
is not the paper's m (j - i) at all; its docstring says it relies on softmax being unchanged by a
constant added to a row. `BloomAttention` then adds it with `alibi.baddbmm(q, k^T, beta=1.0,
alpha=1/sqrt(head_dim))`: the bias is not scaled. The keys after the query are filled with the most
negative float32 before a float32 softmax. BLOOM fuses q, k and v into one projection with biases; the
tree here is the stub's four bias-free kernels.
"""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn


def get_alibi_slopes(num_heads):
    """BLOOM's _get_alibi_slopes: powers of a base fixed by the closest power of two below num_heads,
    then odd powers of the base of twice that many heads for the rest."""
    closest = 2 ** math.floor(math.log2(num_heads))
    base = 2.0 ** (-(2.0 ** -(math.log2(closest) - 3)))
    slopes = base ** jnp.arange(1, 1 + closest, dtype=jnp.float32)
    if closest != num_heads:
        extra_base = 2.0 ** (-(2.0 ** -(math.log2(2 * closest) - 3)))
        remaining = min(closest, num_heads - closest)
        extra = extra_base ** jnp.arange(1, 1 + 2 * remaining, 2, dtype=jnp.float32)
        slopes = jnp.concatenate([slopes, extra])
    return slopes  # (H,)


def build_alibi_tensor(attention_mask, num_heads):
    """(1, T) mask of ones -> (H, 1, T): each head's slope times the key's position, for every query."""
    positions = (jnp.cumsum(attention_mask, axis=-1) - 1) * attention_mask  # (1, T): 0 .. T - 1
    alibi = get_alibi_slopes(num_heads)[:, None] * positions.astype(jnp.float32)  # (H, T)
    return alibi[:, None, :]  # (H, 1, T)


def baddbmm(bias, batch1, batch2, beta, alpha):
    """torch.baddbmm: beta * bias + alpha * (batch1 @ batch2), bias broadcast over the query axis."""
    return beta * bias + alpha * (batch1 @ batch2)


class AlibiAttention(nn.Module):
    d_model: int
    num_heads: int

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.k = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.v = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.o = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)

    def __call__(self, x):
        T = x.shape[0]
        H = self.num_heads
        hd = self.d_model // H
        query = self.q(x).reshape(T, H, hd).transpose(1, 0, 2)  # (H, T, hd)
        key = self.k(x).reshape(T, H, hd).transpose(1, 2, 0)  # (H, hd, T), as BLOOM keeps it
        value = self.v(x).reshape(T, H, hd).transpose(1, 0, 2)  # (H, T, hd)
        alibi = build_alibi_tensor(jnp.ones((1, T), jnp.int32), H)  # (H, 1, T)
        scores = baddbmm(alibi, query, key, beta=1.0, alpha=1.0 / math.sqrt(hd))  # (H, T, T)
        causal_mask = jnp.triu(jnp.ones((T, T), dtype=bool), k=1)  # True where the key comes later
        scores = jnp.where(causal_mask, jnp.finfo(jnp.float32).min, scores)
        probs = jax.nn.softmax(scores.astype(jnp.float32), axis=-1)
        context = (probs @ value).transpose(1, 0, 2).reshape(T, self.d_model)  # (T, D)
        return self.o(context)


def alibi_attention(seed, x, num_heads):
    """Initialises an AlibiAttention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = AlibiAttention(int(x.shape[1]), int(num_heads))
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), jax.ShapeDtypeStruct(x.shape, x.dtype))
    return model.apply(variables, x).reshape(-1)  # (T * D,)
