"""Correct alternative: buckets from a Python loop over sizes in float64, heads in a Python loop.

The module tree is the stub's. The bucket of every size is computed once in plain Python
(math.log, float64) and the (T, T) bucket matrix is a numpy constant; attention runs one head
at a time on column slices, and the heads are put back side by side with concatenate.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Maps each offset (key position minus query position) to its T5 bucket.

    Args:
        relative_position: (T_q, T_k) int32, key position j minus query position i.
        bidirectional: bool, True for the two-sided scheme, False for the causal one.
        num_buckets: int, even and >= 4, the buckets in total.
        max_distance: int > num_buckets // 2.

    Returns:
        (T_q, T_k) int32, every bucket in [0, num_buckets).
    """
    offsets = np.asarray(relative_position)
    side = num_buckets // 2 if bidirectional else num_buckets
    exact = side // 2

    def size_bucket(size):
        if size < exact:
            return size
        b = exact + math.floor(math.log(size / exact) / math.log(max_distance / exact) * (side - exact))
        return min(b, side - 1)

    out = np.zeros(offsets.shape, dtype=np.int32)
    for idx, r in np.ndenumerate(offsets):
        r = int(r)
        if bidirectional:
            out[idx] = (side if r > 0 else 0) + size_bucket(abs(r))
        else:
            out[idx] = size_bucket(max(-r, 0))
    return out


class RelativePositionBias(nn.Module):
    num_buckets: int
    num_heads: int
    max_distance: int
    bidirectional: bool

    def setup(self):
        self.embedding = self.param(
            "embedding",
            nn.initializers.variance_scaling(1.0, "fan_in", "normal", out_axis=0),
            (self.num_buckets, self.num_heads),
        )  # (num_buckets, H)

    def __call__(self, length):
        pos = np.arange(length)
        bucket = relative_position_bucket(pos[None, :] - pos[:, None], self.bidirectional,
                                          self.num_buckets, self.max_distance)  # (T, T)
        return jnp.stack([self.embedding[bucket, h] for h in range(self.num_heads)])  # (H, T, T)


class T5Attention(nn.Module):
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

    def __call__(self, x):
        T = x.shape[0]
        hd = self.d_model // self.num_heads
        q, k, v = self.q(x), self.k(x), self.v(x)  # (T, D) each
        bias = self.relative_attention_bias(T)  # (H, T, T)
        future = np.triu(np.ones((T, T), dtype=bool), k=1)  # (T, T): key after query
        outs = []
        for h in range(self.num_heads):
            cols = slice(h * hd, (h + 1) * hd)
            s = q[:, cols] @ k[:, cols].T + bias[h]  # (T, T)
            if self.causal:
                s = jnp.where(future, -1e30, s)
            outs.append(jax.nn.softmax(s, axis=1) @ v[:, cols])  # (T, hd)
        return self.o(jnp.concatenate(outs, axis=1))  # (T, D)


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
    model = T5Attention(int(x.shape[1]), int(num_heads), int(num_buckets), int(max_distance), bool(causal))
    variables = model.init(jax.random.PRNGKey(int(seed)), x)
    return model.apply(variables, x).reshape(-1)  # (T * D,)
