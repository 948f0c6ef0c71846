"""T5 relative position bias: one learned scalar per (bucket, head), looked up for every query/key pair.

The module tree (names, shapes, initialiser) is fixed in `setup()`: Flax derives the table's random
values from its path, so keep it as given. Your task: write `relative_position_bucket` and the body of
`RelativePositionBias.__call__`, both marked TODO. The entry function at the bottom is already wired
(parameters from the seed, apply, shape check, flatten); leave it as it is.
"""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Maps offsets (key position minus query position) to T5 buckets.

    Bidirectional: half of the buckets per direction, keys after the query (offset > 0) in the upper
    half. One-directional: only keys before the query are told apart (size max(-offset, 0)); every
    key at or after the query shares bucket 0. In each case, of a direction's N buckets the first
    N // 2 hold the exact sizes 0 .. N // 2 - 1, the rest are log-spaced up to max_distance, and
    larger sizes share the last one.

    Args:
        relative_position: (q_len, k_len) int32, key position minus query position.
        bidirectional: bool, whether keys after the query get buckets of their own.
        num_buckets: int, buckets in total (>= 4 and even when bidirectional, >= 2 otherwise).
        max_distance: int, the size where the log-spaced buckets stop growing; larger than the
            number of exact sizes.

    Returns:
        (q_len, k_len) int32, every value in [0, num_buckets).
    """
    rp = jnp.asarray(relative_position)
    ret = jnp.zeros_like(rp)
    if bidirectional:
        n = num_buckets // 2
        ret = ret + (rp > 0).astype(jnp.int32) * n
        dist = jnp.abs(rp)
    else:
        n = num_buckets
        dist = jnp.maximum(-rp, 0)
    max_exact = n // 2
    is_small = dist < max_exact
    # clip to 1 so that log(0) never happens; the small sizes use the other branch anyway
    dist_f = jnp.maximum(dist, 1).astype(jnp.float32)
    log_bucket = max_exact + (
        jnp.log(dist_f / max_exact) / math.log(max_distance / max_exact) * (n - max_exact)
    ).astype(jnp.int32)
    log_bucket = jnp.minimum(log_bucket, n - 1)
    return ret + jnp.where(is_small, dist, log_bucket)


class RelativePositionBias(nn.Module):
    """T5's relative position bias: a (num_buckets, num_heads) table looked up by bucket.

    Attributes:
        num_buckets: rows of the table, buckets over both directions.
        num_heads: columns of the table, one scalar per head.
        max_distance: offset size where the log-spaced buckets stop growing.
        bidirectional: True for encoder self-attention, False for decoder (causal) self-attention.
    """

    num_buckets: int
    num_heads: int
    max_distance: int
    bidirectional: bool

    def setup(self):
        self.relative_attention_bias = nn.Embed(
            self.num_buckets, self.num_heads, embedding_init=nn.initializers.normal(stddev=1.0)
        )  # embedding (num_buckets, num_heads)

    def __call__(self, q_len, k_len):
        """The bias every head adds to its attention logits.

        Query i sits at position i and key j at position j (both counted from 0), whatever the two
        lengths are.

        Args:
            q_len: int >= 1, number of queries.
            k_len: int >= 1, number of keys.

        Returns:
            (1, num_heads, q_len, k_len) float32: [0, h, i, j] is head h's entry for the bucket of
            the offset j - i.
        """
        context_position = jnp.arange(q_len)[:, None]
        memory_position = jnp.arange(k_len)[None, :]
        rel = memory_position - context_position  # (q_len, k_len)
        buckets = relative_position_bucket(rel, self.bidirectional, self.num_buckets, self.max_distance)
        vals = self.relative_attention_bias(buckets)  # (q_len, k_len, num_heads)
        vals = jnp.swapaxes(vals, 0, 2)  # (num_heads, q_len, k_len)
        return jnp.expand_dims(vals, 0)


def _table(module):
    """The bias table, (num_buckets, num_heads): what the entry initialises."""
    return module.relative_attention_bias.embedding


def t5_relative_bias(seed, q_len, k_len, num_heads, num_buckets, max_distance, bidirectional):
    """Initialises a RelativePositionBias from `seed` and returns its bias for q_len x k_len.

    Args:
        seed: int, seeds jax.random.PRNGKey for the table.
        q_len: int >= 1, number of queries.
        k_len: int >= 1, number of keys.
        num_heads: int >= 1, H.
        num_buckets: int, rows of the table (even and >= 4 when bidirectional, >= 2 otherwise).
        max_distance: int, larger than the number of exact sizes per direction.
        bidirectional: bool, True for the encoder's rule, False for the decoder's.

    Returns:
        (H * q_len * k_len,) float32: the (1, H, q_len, k_len) bias flattened row by row.
    """
    model = RelativePositionBias(
        num_buckets=int(num_buckets),
        num_heads=int(num_heads),
        max_distance=int(max_distance),
        bidirectional=bool(bidirectional),
    )
    q_len, k_len = int(q_len), int(k_len)
    # The table depends on the seed and the sizes, not on the lengths, so initialising only the
    # table (touching it creates it, from the same key as model.init(key, q_len, k_len) would)
    # gives the same values. ensure_compile_time_eval makes them concrete even under jax.jit: the
    # random initialiser stays out of the compiled program, which makes compiling fast.
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), method=_table)
    bias = model.apply(variables, q_len, k_len)  # (1, H, q_len, k_len)
    wanted = (1, model.num_heads, q_len, k_len)
    if bias.shape != wanted:
        raise ValueError(
            f"RelativePositionBias returned shape {tuple(bias.shape)}; "
            f"expected (1, num_heads, q_len, k_len) = {wanted}"
        )
    return bias.astype(jnp.float32).reshape(-1)  # (H * q_len * k_len,)
