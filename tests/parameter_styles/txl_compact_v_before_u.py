"""Transformer-XL attention in @nn.compact, right in every computation, but v is declared before u, so the seed's values land swapped."""

import jax
import jax.numpy as jnp
import flax.linen as nn


class RelativeSinusoid(nn.Module):
    """Fixed sinusoid embedding of relative distances, sin and cos interleaved."""

    d_model: int

    @nn.compact
    def __call__(self, distances):
        """(L,) float32 -> (L, D) float32."""
        columns = []
        for k in range(self.d_model // 2):
            freq = 10000.0 ** (-2.0 * k / self.d_model)
            columns += [jnp.sin(distances * freq), jnp.cos(distances * freq)]
        return jnp.stack(columns, axis=1)  # (L, D)


class RelativeAttention(nn.Module):
    """Multi-head causal attention with Transformer-XL's relative position terms."""

    d_model: int
    num_heads: int

    @nn.compact
    def __call__(self, x, memory):
        """x (T, D), memory (M, D) -> (T, D)."""
        D, H = self.d_model, self.num_heads
        dh = D // H
        T, M = x.shape[0], memory.shape[0]
        K = M + T
        dense = lambda name: nn.Dense(D, use_bias=False, name=name)  # noqa: E731
        v_bias = self.param("v", nn.initializers.normal(stddev=1.0), (H, dh))  # (H, dh)
        u = self.param("u", nn.initializers.normal(stddev=1.0), (H, dh))  # (H, dh)

        context = jnp.concatenate([memory, x], axis=0)  # (K, D)
        q = dense("query")(x)  # (T, D)
        k = dense("key")(context)  # (K, D)
        v = dense("value")(context)  # (K, D)
        # Distances 0 .. K - 1 cover every pair a query may see; negative ones are hidden
        # anyway, so they are clipped to 0 before the lookup.
        sin_table = RelativeSinusoid(D, name="sinusoid")(jnp.arange(K, dtype=jnp.float32))  # (K, D)
        table = dense("pos_proj")(sin_table)  # (K, D): row d is r for distance d
        dist = (M + jnp.arange(T))[:, None] - jnp.arange(K)[None, :]  # (T, K)
        r = table[jnp.maximum(dist, 0)]  # (T, K, D)

        heads = []
        for h in range(H):
            cols = slice(h * dh, (h + 1) * dh)
            a_c = (q[:, cols] + u[h]) @ k[:, cols].T  # (T, K)
            b_d = jnp.sum((q[:, None, cols] + v_bias[h]) * r[:, :, cols], axis=-1)  # (T, K)
            s = (a_c + b_d) / jnp.sqrt(dh)
            s = jnp.where(dist >= 0, s, -jnp.inf)
            e = jnp.exp(s - s.max(axis=-1, keepdims=True))
            heads.append((e / e.sum(axis=-1, keepdims=True)) @ v[:, cols])  # (T, dh)
        return dense("out")(jnp.concatenate(heads, axis=1))  # (T, D)


def transformer_xl_attention(seed, x, memory, num_heads):
    """Same contract as the reference: (T * D,) float32."""
    x = jnp.asarray(x, jnp.float32)
    memory = jnp.asarray(memory, jnp.float32)
    model = RelativeAttention(d_model=x.shape[1], num_heads=int(num_heads))
    variables = model.init(jax.random.PRNGKey(int(seed)), x, memory)
    return model.apply(variables, x, memory).reshape(-1)
