"""ALiBi bias ported from a FlexAttention score_mod: scale = exp2(-(h + 1) * 8 / H), bias = (q - kv) * scale."""

import jax
import jax.numpy as jnp


def alibi_slopes(num_heads):
    h = jnp.arange(num_heads, dtype=jnp.float32)
    return jnp.exp2(-((h + 1) * 8.0 / num_heads))


def relative_positions(T):
    q = jnp.arange(T)[:, None]
    kv = jnp.arange(T)[None, :]
    return q - kv


def alibi_bias(seed, T, num_heads):
    rel = relative_positions(T).astype(jnp.float32)
    per_head = jax.vmap(lambda scale: rel * scale)(alibi_slopes(num_heads))
    return per_head.reshape(-1)
