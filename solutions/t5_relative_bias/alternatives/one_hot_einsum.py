"""Correct alternative: the bucket of every distinct offset once (a vector of q_len + k_len - 1),
spread over the grid by indexing with j - i, and the table applied as a one-hot matmul with einsum.
The module tree is the stub's."""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    nb = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        upper = (relative_position > 0).astype(jnp.int32) * nb
        n = jnp.abs(relative_position)
    else:
        upper = jnp.zeros_like(relative_position)
        n = jnp.clip(-relative_position, 0, None)
    max_exact = nb // 2
    safe = jnp.clip(n, max_exact, None).astype(jnp.float32)
    scaled = jnp.floor((jnp.log(safe) - math.log(max_exact)) / math.log(max_distance / max_exact) * (nb - max_exact))
    large = jnp.clip(max_exact + scaled.astype(jnp.int32), None, nb - 1)
    return upper + jnp.where(n < max_exact, n, large)


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
        offsets = jnp.arange(-(q_len - 1), k_len)  # every j - i that occurs, (q_len + k_len - 1,)
        buckets = relative_position_bucket(offsets, self.bidirectional, self.num_buckets, self.max_distance)
        one_hot = jax.nn.one_hot(buckets, self.num_buckets, dtype=jnp.float32)  # (q_len + k_len - 1, nb)
        per_offset = jnp.einsum("ob,bh->ho", one_hot, self.relative_attention_bias.embedding,
                                precision=jax.lax.Precision.HIGHEST)  # (H, q_len + k_len - 1)
        index = jnp.arange(k_len)[None, :] - jnp.arange(q_len)[:, None] + (q_len - 1)  # (q_len, k_len)
        return per_offset[:, index][None]  # (1, H, q_len, k_len)


def _table(module):
    return module.relative_attention_bias.embedding


def t5_relative_bias(seed, q_len, k_len, num_heads, num_buckets, max_distance, bidirectional):
    model = RelativePositionBias(int(num_buckets), int(num_heads), int(max_distance), bool(bidirectional))
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), method=_table)
    bias = model.apply(variables, int(q_len), int(k_len))  # (1, H, q_len, k_len)
    return bias.astype(jnp.float32).reshape(-1)
