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
import numpy as np
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
    rel = np.asarray(relative_position)
    half = num_buckets // 2 if bidirectional else num_buckets
    exact = num_buckets // 4
    out = np.zeros(rel.shape, dtype=np.int32)
    for i in range(rel.shape[0]):
        for j in range(rel.shape[1]):
            r = int(rel[i, j])
            if bidirectional:
                start = half if r > 0 else 0
                size = abs(r)
            else:
                start = 0
                size = max(-r, 0)
            if size < exact:
                b = size
            else:
                b = exact + int(math.log(size / exact) / math.log(max_distance / exact) * (half - exact))
                b = min(b, half - 1)
            out[i, j] = start + b
    return jnp.asarray(out)


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
        idx = np.arange(length)
        rel = idx[None, :] - idx[:, None]  # rel[i, j] = j - i
        buckets = relative_position_bucket(rel, self.bidirectional, self.num_buckets, self.max_distance)
        per_head = [self.embedding[:, h][buckets] for h in range(self.num_heads)]
        return jnp.stack(per_head, axis=0)


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
        head_dim = self.d_model // self.num_heads
        heads = []
        for h in range(self.num_heads):
            lo, hi = h * head_dim, (h + 1) * head_dim
            heads.append(t[:, lo:hi])
        return jnp.stack(heads, axis=0)

    def merge_heads(self, t):
        """(H, T, d_head) -> (T, D): split_heads undone."""
        return jnp.concatenate([t[h] for h in range(self.num_heads)], axis=-1)

    def scores(self, q, k, bias):
        """Every head's score of every (query i, key j) pair.

        Args:
            q, k: (H, T, d_head) float32, the queries and keys split into heads.
            bias: (H, T, T) float32, from relative_attention_bias.

        Returns:
            (H, T, T) float32: q_i . k_j + bias[h, i, j], not scaled.
        """
        logits = []
        for h in range(self.num_heads):
            logits.append(q[h] @ k[h].T + bias[h])
        return jnp.stack(logits, axis=0)

    def weights(self, scores):
        """The attention weights: in a causal layer the keys after each query hidden; softmax over the keys.

        Args:
            scores: (H, T, T) float32, from scores().

        Returns:
            (H, T, T) float32: each query's weights over the keys sum to 1.
        """
        seq_len = scores.shape[-1]
        allowed = np.arange(seq_len)[None, :] <= np.arange(seq_len)[:, None]
        probs = []
        for h in range(self.num_heads):
            logits = scores[h]
            if self.causal:
                logits = jnp.where(allowed, logits, MASK_VALUE)
            probs.append(jax.nn.softmax(logits, axis=-1))
        return jnp.stack(probs, axis=0)

    def __call__(self, x):
        """Lets every position of `x` attend over the positions of `x`.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        seq_len = x.shape[0]
        queries = self.split_heads(self.q(x))
        keys = self.split_heads(self.k(x))
        values = self.split_heads(self.v(x))
        bias = self.relative_attention_bias(seq_len)  # (H, T, T)
        probs = self.weights(self.scores(queries, keys, bias))
        outputs = [probs[h] @ values[h] for h in range(self.num_heads)]
        return self.o(self.merge_heads(jnp.stack(outputs, axis=0)))


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
