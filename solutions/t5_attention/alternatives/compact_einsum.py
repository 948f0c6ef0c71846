"""Correct alternative: one @nn.compact module with nn.Embed for the table, einsum for the heads.

Submodules named as in the stub (q, k, v, o, relative_attention_bias) give the same parameter
tree, and so the same values from the same seed: nn.Embed's table is a parameter named
"embedding" with the initialiser the stub writes out. The bucketing uses floor and clip.
"""

import math

import jax
import jax.numpy as jnp
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
    if bidirectional:
        side = num_buckets // 2
        upper = (relative_position > 0).astype(jnp.int32) * side
        size = jnp.abs(relative_position)
    else:
        side = num_buckets
        upper = 0
        size = -jnp.clip(relative_position, max=0)
    exact = side // 2
    safe = jnp.where(size < exact, exact, size).astype(jnp.float32)
    log_bucket = exact + jnp.floor(jnp.log(safe / exact) * ((side - exact) / math.log(max_distance / exact)))
    log_bucket = jnp.clip(log_bucket, max=side - 1).astype(jnp.int32)
    return upper + jnp.where(size < exact, size, log_bucket)


class T5Attention(nn.Module):
    d_model: int
    num_heads: int
    num_buckets: int
    max_distance: int
    causal: bool

    @nn.compact
    def __call__(self, x):
        T = x.shape[0]
        H = self.num_heads
        hd = self.d_model // H
        q = nn.Dense(self.d_model, use_bias=False, name="q")(x).reshape(T, H, hd)  # (T, H, hd)
        k = nn.Dense(self.d_model, use_bias=False, name="k")(x).reshape(T, H, hd)  # (T, H, hd)
        v = nn.Dense(self.d_model, use_bias=False, name="v")(x).reshape(T, H, hd)  # (T, H, hd)
        table = nn.Embed(self.num_buckets, H, name="relative_attention_bias")
        pos = jnp.arange(T)
        bucket = relative_position_bucket(pos[None, :] - pos[:, None], not self.causal,
                                          self.num_buckets, self.max_distance)  # (T, T)
        bias = jnp.einsum("ijh->hij", table(bucket))  # (H, T, T)
        scores = jnp.einsum("ihd,jhd->hij", q, k) + bias  # (H, T, T)
        if self.causal:
            scores = jnp.where(pos[None, :] <= pos[:, None], scores, -jnp.inf)
        weights = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("hij,jhd->ihd", weights, v).reshape(T, self.d_model)  # (T, D)
        return nn.Dense(self.d_model, use_bias=False, name="o")(out)


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
    placeholder = jax.ShapeDtypeStruct((2, x.shape[1]), jnp.float32)
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), placeholder)
    return model.apply(variables, x).reshape(-1)  # (T * D,)
