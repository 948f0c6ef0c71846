"""Transformer-XL attention in NumPy beside a spec module whose pos_proj has a bias the statement does not have (never used)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


class RelativeSinusoid(nn.Module):
    d_model: int

    def __call__(self, distances):
        return jnp.zeros((distances.shape[0], self.d_model))


class RelativeAttention(nn.Module):
    d_model: int
    num_heads: int

    def setup(self):
        d_head = self.d_model // self.num_heads
        self.query = nn.Dense(self.d_model, use_bias=False)
        self.key = nn.Dense(self.d_model, use_bias=False)
        self.value = nn.Dense(self.d_model, use_bias=False)
        self.pos_proj = nn.Dense(self.d_model)
        self.out = nn.Dense(self.d_model, use_bias=False)
        self.u = self.param("u", nn.initializers.normal(stddev=1.0), (self.num_heads, d_head))
        self.v = self.param("v", nn.initializers.normal(stddev=1.0), (self.num_heads, d_head))
        self.sinusoid = RelativeSinusoid(self.d_model)

    def __call__(self, x, memory):
        """Touches every submodule once; the output means nothing."""
        h = self.query(x) + self.key(x) + self.value(x) + self.pos_proj(x)
        return self.out(h) + self.u.sum() + self.v.sum()


def sinusoid(distance, D):
    """(D,) float64: sin in column 2k, cos in column 2k + 1, frequency 10000 ** (-2k / D)."""
    row = np.zeros(D)
    for k in range(D // 2):
        angle = distance * 10000.0 ** (-2.0 * k / D)
        row[2 * k] = math.sin(angle)
        row[2 * k + 1] = math.cos(angle)
    return row


def transformer_xl_attention(seed, x, memory, num_heads):
    """Same contract as the reference: (T * D,) float32."""
    x = np.asarray(x, dtype=np.float64)  # (T, D)
    memory = np.asarray(memory, dtype=np.float64)  # (M, D)
    T, D = x.shape
    M = memory.shape[0]
    H = int(num_heads)
    dh = D // H
    model = RelativeAttention(d_model=D, num_heads=H)
    variables = model.init(jax.random.PRNGKey(int(seed)), jnp.zeros((1, D)), jnp.zeros((1, D)))
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), variables["params"])

    context = np.concatenate([memory, x], axis=0)  # (M + T, D)
    q = x @ p["query"]["kernel"]  # (T, D)
    k = context @ p["key"]["kernel"]  # (M + T, D)
    v = context @ p["value"]["kernel"]  # (M + T, D)
    merged = np.zeros((T, D))
    for h in range(H):
        cols = slice(h * dh, (h + 1) * dh)
        for i in range(T):
            seen = range(M + i + 1)  # keys at absolute positions 0 .. M + i
            scores = []
            for j in seen:
                r = (sinusoid(M + i - j, D) @ p["pos_proj"]["kernel"])[cols]  # (dh,)
                a = q[i, cols] @ k[j, cols]
                b = q[i, cols] @ r
                c = p["u"][h] @ k[j, cols]
                d = p["v"][h] @ r
                scores.append((a + b + c + d) / math.sqrt(dh))
            biggest = max(scores)
            weights = [math.exp(s - biggest) for s in scores]
            total = sum(weights)
            for j, w in zip(seen, weights):
                merged[i, cols] += w / total * v[j, cols]
    out = merged @ p["out"]["kernel"]  # (T, D)
    return out.astype(np.float32).reshape(-1)  # (T * D,)
