"""Shaw relative attention with its parameters drawn from two top-level modules: the projections in one,
the relative tables in another, each initialised from the seed. A child's key depends on its name alone,
so every parameter has the statement's value."""

import jax
import jax.numpy as jnp
import flax.linen as nn


class Projections(nn.Module):
    d_model: int

    def setup(self):
        self.query = nn.Dense(self.d_model)
        self.key = nn.Dense(self.d_model)
        self.value = nn.Dense(self.d_model)
        self.out = nn.Dense(self.d_model)

    def __call__(self, x):
        return self.query(x), self.key(x), self.value(x)

    def project_out(self, y):
        return self.out(y)

    def every_projection(self, x):
        return self(x), self.out(x)


class RelativeTable(nn.Module):
    k: int
    d_head: int

    @nn.compact
    def __call__(self, length):
        table = self.param("table", nn.initializers.xavier_uniform(), (2 * self.k + 1, self.d_head))
        pos = jnp.arange(length)
        return table[jnp.clip(pos[None, :] - pos[:, None], -self.k, self.k) + self.k]


class Tables(nn.Module):
    k: int
    d_head: int

    def setup(self):
        self.relative_key = RelativeTable(self.k, self.d_head)
        self.relative_value = RelativeTable(self.k, self.d_head)

    def __call__(self, length):
        return self.relative_key(length), self.relative_value(length)


def shaw_relative_attention(seed, x, num_heads, max_relative_position, causal):
    x = jnp.asarray(x, jnp.float32)
    T, D = x.shape
    H, hd = int(num_heads), D // int(num_heads)
    key = jax.random.PRNGKey(int(seed))
    projections, tables = Projections(D), Tables(int(max_relative_position), hd)
    p = projections.init(key, x, method=Projections.every_projection)
    t = tables.init(key, T)
    q, k, v = (a.reshape(T, H, hd).transpose(1, 0, 2) for a in projections.apply(p, x))
    a_k, a_v = tables.apply(t, T)
    scores = (q @ k.transpose(0, 2, 1) + jnp.einsum("hid,ijd->hij", q, a_k)) / jnp.sqrt(jnp.float32(hd))
    if causal:
        scores = jnp.where(jnp.tril(jnp.ones((T, T), bool))[None], scores, jnp.finfo(jnp.float32).min)
    w = jax.nn.softmax(scores, axis=-1)
    heads = w @ v + jnp.einsum("hij,ijd->hid", w, a_v)
    y = projections.apply(p, heads.transpose(1, 0, 2).reshape(T, D), method=Projections.project_out)
    return y.reshape(-1)
