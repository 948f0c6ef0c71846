"""Correct alternative: slopes and bias from plain Python loops, attention one head at a time.

The module tree is the stub's. The slopes are computed head by head in Python floats; the bias is a
nested list filled cell by cell with the symmetric penalty -m |i - j| (which is m (j - i) on the keys
a query may see) and minus infinity for the keys after the query, so the mask is folded into the
bias. Each head is a slice of columns, and the heads are put back side by side with concatenate.
"""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn


def slopes_list(num_heads):
    """The ALiBi slopes as Python floats, head 0 first."""
    c = 1
    while 2 * c <= num_heads:
        c *= 2
    out = []
    for h in range(num_heads):
        if h < c:
            out.append(2.0 ** (-8.0 * (h + 1) / c))
        else:
            out.append(2.0 ** (-4.0 * (2 * (h - c) + 1) / c))
    return out


def bias_with_mask(length, num_heads):
    """(H, T, T) nested lists: -m_h |i - j| where j <= i, minus infinity where j > i."""
    table = []
    for m in slopes_list(num_heads):
        rows = []
        for i in range(length):
            rows.append([-m * abs(i - j) if j <= i else -math.inf for j in range(length)])
        table.append(rows)
    return table


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
        hd = self.d_model // self.num_heads
        q, k, v = self.q(x), self.k(x), self.v(x)  # (T, D) each
        bias = jnp.array(bias_with_mask(T, self.num_heads), dtype=jnp.float32)  # (H, T, T)
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * hd, (h + 1) * hd)
            s = q[:, cols] @ k[:, cols].T / math.sqrt(hd) + bias[h]  # (T, T)
            heads.append(jax.nn.softmax(s, axis=1) @ v[:, cols])  # (T, hd)
        return self.o(jnp.concatenate(heads, axis=1))  # (T, D)


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
    variables = model.init(jax.random.PRNGKey(int(seed)), x)
    return model.apply(variables, x).reshape(-1)  # (T * D,)
