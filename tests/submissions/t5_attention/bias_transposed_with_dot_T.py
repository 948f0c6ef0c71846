"""T5 self-attention: multi-head attention with a learned relative position bias and no scaling.

The module tree (names, shapes, initialisers) is fixed in each `setup()`:
Flax derives every parameter's random key from its path, so keep it as given.
Your task: write the bodies marked TODO: the bucketing function, the bias module, the
attention's steps (split and merge the heads, the scores, the weights) and the `__call__`
that wires them. The entry function at the bottom is already wired (parameters from the
seed, apply, flatten); leave it as it is.
"""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn

# Replaces the score of a key that a query may not see: softmax then gives it weight 0.
MASK_VALUE = jnp.finfo(jnp.float32).min


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Maps each offset (key position minus query position) to its T5 bucket.

    Bidirectional: keys after the query (offset > 0) use the upper half of the
    range, num_buckets // 2 and up; the size |offset| picks the bucket within a
    half. One-directional (causal): only keys at or before the query count, every
    offset > 0 is treated as size 0, and all num_buckets buckets serve the sizes
    -offset. Within the n buckets of one side, the n // 2 smallest sizes get a
    bucket each; larger sizes share log-spaced buckets up to max_distance, and
    every size from max_distance on lands in the side's last bucket, n - 1.

    Args:
        relative_position: (T_q, T_k) int32, key position j minus query position i.
        bidirectional: bool, True for the two-sided scheme, False for the causal one.
        num_buckets: int, even and >= 4, the buckets in total.
        max_distance: int > num_buckets // 2, the size where the log-spaced buckets
            stop growing.

    Returns:
        (T_q, T_k) int32, every bucket in [0, num_buckets).
    """
    rel = relative_position
    if bidirectional:
        num_buckets //= 2
        ret = (rel > 0).astype(jnp.int32) * num_buckets
        n = jnp.abs(rel)
    else:
        ret = jnp.zeros_like(rel)
        n = -jnp.minimum(rel, 0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    # log of something >= 1 only, the small sizes are taken from the other branch anyway
    n_safe = jnp.maximum(n, max_exact).astype(jnp.float32)
    val_if_large = max_exact + (
        jnp.log(n_safe / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).astype(jnp.int32)
    val_if_large = jnp.minimum(val_if_large, num_buckets - 1)
    ret = ret + jnp.where(is_small, n, val_if_large)
    return ret.astype(jnp.int32)


class RelativePositionBias(nn.Module):
    """The learned bias of every (head, query, key) triple: one scalar per bucket and head.

    Attributes:
        num_buckets: rows of the table.
        num_heads: columns of the table, one per head.
        max_distance: passed on to `relative_position_bucket`.
        bidirectional: False for a causal layer.
    """

    num_buckets: int
    num_heads: int
    max_distance: int
    bidirectional: bool

    def setup(self):
        # The very parameter nn.Embed(num_buckets, num_heads) named relative_attention_bias
        # would hold: same name, same initialiser, so the same values from the same seed.
        self.embedding = self.param(
            "embedding",
            nn.initializers.variance_scaling(1.0, "fan_in", "normal", out_axis=0),
            (self.num_buckets, self.num_heads),
        )  # (num_buckets, H)

    def __call__(self, length):
        """Looks up the bias of every head for a self-attention over `length` positions.

        Args:
            length: int, the sequence length T (queries and keys alike).

        Returns:
            (H, T, T) float32: [h, i, j] = embedding[bucket of j - i, h].
        """
        context_position = jnp.arange(length)[:, None]
        memory_position = jnp.arange(length)[None, :]
        buckets = relative_position_bucket(
            memory_position - context_position, self.bidirectional, self.num_buckets, self.max_distance
        )
        values = self.embedding[buckets]  # (T, T, H)
        return values.T


class T5Attention(nn.Module):
    """One T5 self-attention layer: no biases, no score scaling, relative position bias.

    Attributes:
        d_model: model width D; every projection maps D -> D.
        num_heads: number of heads H; D must be divisible by H.
        num_buckets: relative position buckets.
        max_distance: the offset size where the log-spaced buckets stop growing.
        causal: True for a decoder layer (causal mask, one-directional buckets).
    """

    d_model: int
    num_heads: int
    num_buckets: int
    max_distance: int
    causal: bool

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.k = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.v = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.o = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.relative_attention_bias = RelativePositionBias(
            self.num_buckets, self.num_heads, self.max_distance, bidirectional=not self.causal
        )  # embedding (num_buckets, H)

    def split_heads(self, t):
        """(T, D) -> (H, T, d_head): head h gets columns h * d_head .. (h + 1) * d_head - 1."""
        T, D = t.shape
        H = self.num_heads
        return jnp.einsum("thd->htd", t.reshape(T, H, D // H))

    def merge_heads(self, t):
        """(H, T, d_head) -> (T, D): split_heads undone."""
        H, T, dh = t.shape
        return jnp.einsum("htd->thd", t).reshape(T, H * dh)

    def scores(self, q, k, bias):
        """Every head's score of every (query i, key j) pair.

        Args:
            q, k: (H, T, d_head) float32, the queries and keys split into heads.
            bias: (H, T, T) float32, from relative_attention_bias.

        Returns:
            (H, T, T) float32: q_i . k_j + bias[h, i, j], not scaled.
        """
        return jnp.einsum("hqd,hkd->hqk", q, k) + bias

    def weights(self, scores):
        """The attention weights: in a causal layer the keys after each query hidden; softmax over the keys.

        Args:
            scores: (H, T, T) float32, from scores().

        Returns:
            (H, T, T) float32: each query's weights over the keys sum to 1.
        """
        if self.causal:
            T = scores.shape[-1]
            causal_mask = jnp.tril(jnp.ones((T, T), dtype=bool))
            scores = jnp.where(causal_mask, scores, MASK_VALUE)
        return jax.nn.softmax(scores, axis=-1)

    def __call__(self, x):
        """Lets every position of `x` attend over the positions of `x`.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        T = x.shape[0]
        q = self.split_heads(self.q(x))
        k = self.split_heads(self.k(x))
        v = self.split_heads(self.v(x))
        attn = self.weights(self.scores(q, k, self.relative_attention_bias(T)))
        out = jnp.einsum("hqk,hkd->hqd", attn, v)
        return self.o(self.merge_heads(out))


def t5_attention(seed, x, num_heads, num_buckets, max_distance, causal):
    """Initialises a T5Attention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H.
        num_buckets: int, even and >= 4, rows of the relative bias table.
        max_distance: int > num_buckets // 2, the offset size where the log-spaced
            buckets stop growing.
        causal: bool, True for a decoder layer: causal mask and one-directional
            buckets; False for an encoder layer: no mask, bidirectional buckets.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = T5Attention(
        d_model=int(x.shape[1]),
        num_heads=int(num_heads),
        num_buckets=int(num_buckets),
        max_distance=int(max_distance),
        causal=bool(causal),
    )
    # lazy_init traces the forward on the inputs' shapes only, and ensure_compile_time_eval makes
    # the parameters concrete even under jax.jit: the random initialisers stay out of the
    # compiled program, which makes compiling fast.
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), jax.ShapeDtypeStruct(x.shape, x.dtype))
    out = model.apply(variables, x)  # (T, D)
    return out.reshape(-1)  # (T * D,)
