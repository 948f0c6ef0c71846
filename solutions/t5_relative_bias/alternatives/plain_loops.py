"""Correct alternative: plain Python loops over every (query, key) pair, math.log in float64, and the
table read one entry at a time. The module tree is the stub's."""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Here `relative_position` is one Python int, and so is the bucket."""
    if bidirectional:
        nb = num_buckets // 2
        bucket = nb if relative_position > 0 else 0
        n = abs(relative_position)
    else:
        nb = num_buckets
        bucket = 0
        n = max(-relative_position, 0)
    max_exact = nb // 2
    if n < max_exact:
        return bucket + n
    scaled = math.log(n / max_exact) / math.log(max_distance / max_exact) * (nb - max_exact)
    return bucket + min(max_exact + math.floor(scaled), nb - 1)


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
        table = self.relative_attention_bias.embedding  # (num_buckets, H)
        heads = []
        for h in range(self.num_heads):
            rows = []
            for i in range(q_len):
                row = []
                for j in range(k_len):
                    b = relative_position_bucket(j - i, self.bidirectional, self.num_buckets, self.max_distance)
                    row.append(table[b, h])
                rows.append(jnp.stack(row))
            heads.append(jnp.stack(rows))
        return jnp.stack(heads)[None]  # (1, H, q_len, k_len)


def _table(module):
    return module.relative_attention_bias.embedding


def t5_relative_bias(seed, q_len, k_len, num_heads, num_buckets, max_distance, bidirectional):
    model = RelativePositionBias(int(num_buckets), int(num_heads), int(max_distance), bool(bidirectional))
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), method=_table)
    bias = model.apply(variables, int(q_len), int(k_len))  # (1, H, q_len, k_len)
    return bias.astype(jnp.float32).reshape(-1)
