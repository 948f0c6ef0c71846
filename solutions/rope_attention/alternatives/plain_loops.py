"""Correct alternative: the rotation and the attention as plain loops, one head, one pair and one query at
a time.

The module tree is the stub's. Each head is a slice of columns; each of its pairs of features (k,
k + hd/2) is turned with the cos and sin of its own angles, position times base^(-2k/hd); the causal
softmax of each query runs over the keys 0 .. i only, so no mask value is needed; the heads are put
back side by side with concatenate. The loops unroll when jax.jit traces them.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


def turn_head(t, base):
    """One head's (T, hd) queries or keys, row i at position i, its pairs (k, k + hd/2) turned."""
    T, hd = t.shape
    half = hd // 2
    position = np.arange(T, dtype=np.float32)
    first, second = [], []
    for k in range(half):
        angle = position * base ** (-2.0 * k / hd)  # (T,)
        c, s = jnp.cos(angle), jnp.sin(angle)
        first.append(t[:, k] * c - t[:, k + half] * s)
        second.append(t[:, k + half] * c + t[:, k] * s)
    return jnp.stack(first + second, axis=1)  # (T, hd)


class RopeAttention(nn.Module):
    d_model: int
    num_heads: int
    base: float

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.k = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.v = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.o = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)

    def __call__(self, x):
        T = x.shape[0]
        hd = self.d_model // self.num_heads
        q, k, v = self.q(x), self.k(x), self.v(x)  # (T, D) each
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * hd, (h + 1) * hd)
            qh, kh = turn_head(q[:, cols], self.base), turn_head(k[:, cols], self.base)
            rows = []
            for i in range(T):
                seen = kh[: i + 1] @ qh[i] / math.sqrt(hd)  # (i + 1,): the keys 0 .. i only
                rows.append(jax.nn.softmax(seen) @ v[: i + 1, cols])
            heads.append(jnp.stack(rows))  # (T, hd)
        return self.o(jnp.concatenate(heads, axis=1))  # (T, D)


def rope_attention(seed, x, num_heads, base):
    """Initialises a RopeAttention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H, and D // H even.
        base: float > 1, RoPE's base.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = RopeAttention(int(x.shape[1]), int(num_heads), base)
    variables = model.init(jax.random.PRNGKey(int(seed)), x)
    return model.apply(variables, x).reshape(-1)  # (T * D,)
