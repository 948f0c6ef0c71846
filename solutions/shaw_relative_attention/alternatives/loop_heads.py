"""Correct alternative: the stub's setup(), a Python loop over the heads, a one-hot lookup table.

The relative vectors are looked up by multiplying a one-hot encoding of the clipped offsets
with the table; each head takes its own slice of columns of q, k and v.
"""

import jax
import jax.numpy as jnp
import flax.linen as nn


class RelativePosition(nn.Module):
    max_relative_position: int
    d_head: int

    def setup(self):
        k = self.max_relative_position
        self.table = self.param("table", nn.initializers.xavier_uniform(), (2 * k + 1, self.d_head))  # (2k+1, d_head)

    def __call__(self, length):
        k = self.max_relative_position
        i = jnp.arange(length)[:, None]  # (T, 1) query
        j = jnp.arange(length)[None, :]  # (1, T) key
        index = jnp.minimum(jnp.maximum(j - i, -k), k) + k  # (T, T)
        one_hot = jax.nn.one_hot(index, 2 * k + 1, dtype=self.table.dtype)  # (T, T, 2k+1)
        return one_hot @ self.table  # (T, T, d_head)


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
        T = x.shape[0]
        hd = self.d_model // self.num_heads
        q_all, k_all, v_all = self.query(x), self.key(x), self.value(x)  # (T, D) each
        a_k = self.relative_key(T)  # (T, T, hd)
        a_v = self.relative_value(T)  # (T, T, hd)
        visible = jnp.tril(jnp.ones((T, T), dtype=bool)) if causal else jnp.ones((T, T), dtype=bool)
        outputs = []
        for h in range(self.num_heads):
            cols = slice(h * hd, (h + 1) * hd)
            q, k, v = q_all[:, cols], k_all[:, cols], v_all[:, cols]  # (T, hd) each
            scores = (q @ k.T + jnp.sum(q[:, None, :] * a_k, axis=-1)) / jnp.sqrt(hd)  # (T, T)
            scores = jnp.where(visible, scores, -jnp.inf)
            w = jax.nn.softmax(scores, axis=-1)  # (T, T)
            outputs.append(w @ v + jnp.sum(w[:, :, None] * a_v, axis=1))  # (T, hd)
        return self.out(jnp.concatenate(outputs, axis=-1))  # (T, D)


def shaw_relative_attention(seed, x, num_heads, max_relative_position, causal):
    """Same contract as the reference: (T * D,) float32."""
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = ShawAttention(int(x.shape[1]), int(num_heads), int(max_relative_position))
    variables = model.init(jax.random.PRNGKey(int(seed)), x, bool(causal))
    return model.apply(variables, x, bool(causal)).reshape(-1)  # (T * D,)
