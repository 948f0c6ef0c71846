"""Shaw attention in NumPy from the stub's tree, with the four projections' biases never added (they start at zeros)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


class RelativePosition(nn.Module):
    max_relative_position: int
    d_head: int

    def setup(self):
        k = self.max_relative_position
        self.table = self.param("table", nn.initializers.xavier_uniform(), (2 * k + 1, self.d_head))

    def __call__(self, length):
        return self.table


class ShawAttention(nn.Module):
    d_model: int
    num_heads: int
    max_relative_position: int

    def setup(self):
        d_head = self.d_model // self.num_heads
        self.query = nn.Dense(self.d_model)
        self.key = nn.Dense(self.d_model)
        self.value = nn.Dense(self.d_model)
        self.out = nn.Dense(self.d_model)
        self.relative_key = RelativePosition(self.max_relative_position, d_head)
        self.relative_value = RelativePosition(self.max_relative_position, d_head)

    def __call__(self, x, causal):
        """Touches every submodule once; the output means nothing."""
        self.relative_key(1)
        self.relative_value(1)
        return self.out(self.query(x) + self.key(x) + self.value(x))


def dense(p, x):
    return x @ p["kernel"]  # the bias forgotten


def shaw_relative_attention(seed, x, num_heads, max_relative_position, causal):
    """Same contract as the reference: (T * D,) float32."""
    x32 = np.asarray(x, dtype=np.float32)  # (T, D)
    T, D = x32.shape
    H, k = int(num_heads), int(max_relative_position)
    hd = D // H
    model = ShawAttention(D, H, k)
    variables = model.init(jax.random.PRNGKey(int(seed)), jnp.asarray(x32), bool(causal))
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), variables["params"])
    a_k, a_v = p["relative_key"]["table"], p["relative_value"]["table"]  # (2k+1, hd) each

    x64 = x32.astype(np.float64)
    q, kk, v = dense(p["query"], x64), dense(p["key"], x64), dense(p["value"], x64)  # (T, D) each
    merged = np.zeros((T, D))
    for h in range(H):
        c = slice(h * hd, (h + 1) * hd)
        for i in range(T):
            keys = range(i + 1) if causal else range(T)
            scores = []
            for j in keys:
                r = min(max(j - i, -k), k) + k  # clipped offset, as a table row
                scores.append(q[i, c] @ (kk[j, c] + a_k[r]) / math.sqrt(hd))
            e = np.exp(np.array(scores) - max(scores))
            w = e / e.sum()
            for wj, j in zip(w, keys):
                r = min(max(j - i, -k), k) + k
                merged[i, c] += wj * (v[j, c] + a_v[r])
    return dense(p["out"], merged).astype(np.float32).reshape(-1)  # (T * D,)
