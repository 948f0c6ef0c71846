"""Correct alternative: `@nn.compact` modules, `jnp.take(mode="clip")` for the clipped lookup, einsums.

The submodules and parameters carry the stub's names (Flax derives each parameter's value from
its path), so the parameter tree is the reference's. The relative key vectors are added to the
keys, q_i . (k_j + a_K[i, j]), the way the paper writes it.
"""

import jax
import jax.numpy as jnp
import flax.linen as nn


class RelativePosition(nn.Module):
    max_relative_position: int
    d_head: int

    @nn.compact
    def __call__(self, length):
        k = self.max_relative_position
        table = self.param("table", nn.initializers.xavier_uniform(), (2 * k + 1, self.d_head))  # (2k+1, d_head)
        pos = jnp.arange(length)  # (T,)
        # mode="clip" clamps j - i + k into 0 .. 2k, which is clipping j - i to -k .. k
        return jnp.take(table, pos[None, :] - pos[:, None] + k, axis=0, mode="clip")  # (T, T, d_head)


class ShawAttention(nn.Module):
    d_model: int
    num_heads: int
    max_relative_position: int

    @nn.compact
    def __call__(self, x, causal):
        T, D = x.shape
        H = self.num_heads
        hd = D // H
        q = nn.Dense(D, name="query")(x).reshape(T, H, hd)  # (T, H, hd)
        k = nn.Dense(D, name="key")(x).reshape(T, H, hd)  # (T, H, hd)
        v = nn.Dense(D, name="value")(x).reshape(T, H, hd)  # (T, H, hd)
        a_k = RelativePosition(self.max_relative_position, hd, name="relative_key")(T)  # (T, T, hd)
        a_v = RelativePosition(self.max_relative_position, hd, name="relative_value")(T)  # (T, T, hd)

        keys = k[None, :, :, :] + a_k[:, :, None, :]  # (T_i, T_j, H, hd): k_j + a_K[i, j]
        scores = jnp.einsum("ihd,ijhd->hij", q, keys) / jnp.sqrt(hd)  # (H, T, T)
        if causal:
            scores = jnp.where(jnp.arange(T)[None, :] <= jnp.arange(T)[:, None], scores, -1e9)
        weights = jax.nn.softmax(scores, axis=-1)  # (H, T, T)
        values = v[None, :, :, :] + a_v[:, :, None, :]  # (T_i, T_j, H, hd): v_j + a_V[i, j]
        heads = jnp.einsum("hij,ijhd->ihd", weights, values)  # (T, H, hd)
        return nn.Dense(D, name="out")(heads.reshape(T, D))  # (T, D)


def shaw_relative_attention(seed, x, num_heads, max_relative_position, causal):
    """Same contract as the reference: (T * D,) float32."""
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = ShawAttention(int(x.shape[1]), int(num_heads), int(max_relative_position))
    variables = model.init(jax.random.PRNGKey(int(seed)), x, bool(causal))
    return model.apply(variables, x, bool(causal)).reshape(-1)  # (T * D,)
