"""Correct alternative: the buckets in numpy float64 (the lengths are Python ints, so they are concrete
even under jax.jit), only the table lookup in JAX. The module tree is the stub's."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    rel = np.asarray(relative_position, dtype=np.int64)
    if bidirectional:
        nb = num_buckets // 2
        ret = np.where(rel > 0, nb, 0)
        n = np.abs(rel)
    else:
        nb = num_buckets
        ret = np.zeros_like(rel)
        n = np.maximum(-rel, 0)
    max_exact = nb // 2
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) on sizes the where discards
        large = max_exact + np.floor(
            np.log(n / max_exact) / math.log(max_distance / max_exact) * (nb - max_exact)
        ).astype(np.int64)
    large = np.minimum(large, nb - 1)
    return ret + np.where(n < max_exact, n, large)


class RelativePositionBias(nn.Module):
    num_buckets: int
    num_heads: int
    max_distance: int
    bidirectional: bool

    def setup(self):
        self.relative_attention_bias = nn.Embed(
            self.num_buckets, self.num_heads, embedding_init=nn.initializers.normal(stddev=1.0)
        )  # embedding (num_buckets, num_heads)

    def __call__(self, q_len, k_len):
        rel = np.arange(k_len)[None, :] - np.arange(q_len)[:, None]  # (q_len, k_len)
        buckets = relative_position_bucket(rel, self.bidirectional, self.num_buckets, self.max_distance)
        values = self.relative_attention_bias(jnp.asarray(buckets, dtype=jnp.int32))  # (q_len, k_len, H)
        return jnp.transpose(values, (2, 0, 1))[None]  # (1, H, q_len, k_len)


def _table(module):
    return module.relative_attention_bias.embedding


def t5_relative_bias(seed, q_len, k_len, num_heads, num_buckets, max_distance, bidirectional):
    model = RelativePositionBias(int(num_buckets), int(num_heads), int(max_distance), bool(bidirectional))
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), method=_table)
    bias = model.apply(variables, int(q_len), int(k_len))  # (1, H, q_len, k_len)
    return bias.astype(jnp.float32).reshape(-1)
