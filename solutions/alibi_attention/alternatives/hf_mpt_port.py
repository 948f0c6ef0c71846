"""Correct alternative: Hugging Face MPT's ALiBi attention, ported to JAX on the stub's module tree.

MPT (transformers/models/mpt/modeling_mpt.py) writes its bias as m * (j - (T - 1)): every query's row
is the same, 0 at the last key and negative before it, a constant away from the paper's m (j - i) in
each row. Its slopes are 1 / 2^(8 k / H') for k = 1 .. H', H' the power of two at or above H, and for
other H every second slope and then the ones in between, cut to H: the same slopes as the paper's rule.
`MptAttention` scales q . k by 1/sqrt(head_dim), adds the bias unscaled and fills the keys after the
query with the most negative float32 before the softmax.
"""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn


def build_mpt_alibi_tensor(num_heads, sequence_length, alibi_bias_max=8):
    """(H, 1, T): each head's slope times j - (T - 1), the same row for every query."""
    alibi = jnp.arange(1 - sequence_length, 1, dtype=jnp.float32)[None, None, :]  # (1, 1, T)
    padded = 2 ** math.ceil(math.log2(num_heads))
    base = jnp.arange(1, padded + 1, dtype=jnp.float32) * (alibi_bias_max / padded)
    slopes = 1.0 / jnp.power(2.0, base)  # (H',)
    if padded != num_heads:
        slopes = jnp.concatenate([slopes[1::2], slopes[::2]])[:num_heads]  # (H,)
    return alibi * slopes[:, None, None]  # (H, 1, T)


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
        softmax_scale = 1.0 / math.sqrt(hd)
        query = self.q(x).reshape(T, H, hd).transpose(1, 0, 2)  # (H, T, hd)
        key = self.k(x).reshape(T, H, hd).transpose(1, 0, 2)  # (H, T, hd)
        value = self.v(x).reshape(T, H, hd).transpose(1, 0, 2)  # (H, T, hd)
        scores = jnp.matmul(query, key.transpose(0, 2, 1)) * softmax_scale  # (H, T, T)
        position_bias = build_mpt_alibi_tensor(H, T)  # (H, 1, T)
        scores = scores + position_bias[:, -T:, -T:]
        future = jnp.triu(jnp.ones((T, T), dtype=bool), k=1)
        scores = jnp.where(future, jnp.finfo(scores.dtype).min, scores)
        weights = jax.nn.softmax(scores, axis=-1)
        context = jnp.matmul(weights, value).transpose(1, 0, 2).reshape(T, self.d_model)  # (T, D)
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
