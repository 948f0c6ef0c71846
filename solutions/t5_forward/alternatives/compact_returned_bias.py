"""Correct alternative: @nn.compact modules, and the bias handed on as Hugging Face's T5 does.

The first block's self-attention computes the bias from its own table and returns it with
its output; each block passes it back up, and the stack gives it to the next block. The
submodules are named explicitly, so the parameter tree (and so the parameters) is the
statement's.
"""

import math

import jax
import jax.numpy as jnp
import flax.linen as nn


def bucket_of(relative_position, bidirectional, num_buckets, max_distance):
    """(T_q, T_k) int32 offsets j - i -> (T_q, T_k) int32 buckets."""
    nb = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        base = nb * (relative_position > 0)
        n = jnp.abs(relative_position)
    else:
        base = 0
        n = -jnp.minimum(relative_position, 0)
    max_exact = nb // 2
    ratio = jnp.maximum(n, 1).astype(jnp.float32) / max_exact  # n = 0 never takes the log branch
    large = max_exact + (jnp.log(ratio) / math.log(max_distance / max_exact) * (nb - max_exact)).astype(jnp.int32)
    return base + jnp.where(n < max_exact, n, jnp.minimum(large, nb - 1))


class T5LayerNorm(nn.Module):
    d_model: int
    eps: float = 1e-6

    @nn.compact
    def __call__(self, x):
        weight = self.param("weight", nn.initializers.ones, (self.d_model,))  # (D,)
        variance = jnp.mean(jnp.square(x), axis=-1, keepdims=True)  # (T, 1)
        return weight * x * jax.lax.rsqrt(variance + self.eps)


class T5Attention(nn.Module):
    d_model: int
    num_heads: int
    has_relative_attention_bias: bool = False
    bidirectional: bool = True
    num_buckets: int = 32
    max_distance: int = 128

    @nn.compact
    def __call__(self, x, context, position_bias=None, mask=None):
        """Returns (output (T_q, D), the bias it used or None)."""
        H, D = self.num_heads, self.d_model
        hd = D // H
        T_q, T_k = x.shape[0], context.shape[0]
        q = nn.Dense(D, use_bias=False, name="q")(x).reshape(T_q, H, hd)  # (T_q, H, hd)
        k = nn.Dense(D, use_bias=False, name="k")(context).reshape(T_k, H, hd)  # (T_k, H, hd)
        v = nn.Dense(D, use_bias=False, name="v")(context).reshape(T_k, H, hd)  # (T_k, H, hd)
        if position_bias is None and self.has_relative_attention_bias:
            table = nn.Embed(
                self.num_buckets, H, embedding_init=nn.initializers.normal(stddev=1.0),
                name="relative_attention_bias",
            )
            rel = jnp.arange(T_k)[None, :] - jnp.arange(T_q)[:, None]  # (T_q, T_k)
            buckets = bucket_of(rel, self.bidirectional, self.num_buckets, self.max_distance)
            position_bias = jnp.moveaxis(table(buckets), -1, 0)  # (H, T_q, T_k)
        scores = jnp.einsum("qhd,khd->hqk", q, k)  # (H, T_q, T_k)
        if position_bias is not None:
            scores = scores + position_bias
        if mask is not None:
            scores = jnp.where(mask, scores, jnp.finfo(jnp.float32).min)
        weights = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("hqk,khd->qhd", weights, v).reshape(T_q, D)  # (T_q, D)
        return nn.Dense(D, use_bias=False, name="o")(out), position_bias


class T5DenseReluDense(nn.Module):
    d_model: int
    d_ff: int

    @nn.compact
    def __call__(self, x):
        h = nn.relu(nn.Dense(self.d_ff, use_bias=False, name="wi")(x))  # (T, d_ff)
        return nn.Dense(self.d_model, use_bias=False, name="wo")(h)


class T5LayerSelfAttention(nn.Module):
    d_model: int
    num_heads: int
    has_relative_attention_bias: bool
    bidirectional: bool
    num_buckets: int
    max_distance: int

    @nn.compact
    def __call__(self, x, position_bias, mask=None):
        h = T5LayerNorm(self.d_model, name="layer_norm")(x)
        out, position_bias = T5Attention(
            self.d_model, self.num_heads, self.has_relative_attention_bias, self.bidirectional,
            self.num_buckets, self.max_distance, name="SelfAttention",
        )(h, h, position_bias, mask)
        return x + out, position_bias


class T5LayerCrossAttention(nn.Module):
    d_model: int
    num_heads: int

    @nn.compact
    def __call__(self, x, memory):
        h = T5LayerNorm(self.d_model, name="layer_norm")(x)
        out, _ = T5Attention(self.d_model, self.num_heads, name="EncDecAttention")(h, memory)
        return x + out


class T5LayerFF(nn.Module):
    d_model: int
    d_ff: int

    @nn.compact
    def __call__(self, x):
        h = T5LayerNorm(self.d_model, name="layer_norm")(x)
        return x + T5DenseReluDense(self.d_model, self.d_ff, name="DenseReluDense")(h)


class T5Block(nn.Module):
    d_model: int
    num_heads: int
    d_ff: int
    is_decoder: bool
    has_relative_attention_bias: bool
    num_buckets: int
    max_distance: int

    @nn.compact
    def __call__(self, x, position_bias, mask=None, memory=None):
        """Returns (x, the position bias), so that the stack can hand it to the next block."""
        x, position_bias = T5LayerSelfAttention(
            self.d_model, self.num_heads, self.has_relative_attention_bias, not self.is_decoder,
            self.num_buckets, self.max_distance, name="layer_0",
        )(x, position_bias, mask)
        if self.is_decoder:
            x = T5LayerCrossAttention(self.d_model, self.num_heads, name="layer_1")(x, memory)
        ff_name = "layer_2" if self.is_decoder else "layer_1"
        return T5LayerFF(self.d_model, self.d_ff, name=ff_name)(x), position_bias


class T5Stack(nn.Module):
    d_model: int
    num_heads: int
    d_ff: int
    num_layers: int
    is_decoder: bool
    num_buckets: int
    max_distance: int

    @nn.compact
    def __call__(self, x, memory=None):
        T = x.shape[0]
        mask = jnp.tril(jnp.ones((T, T), dtype=bool)) if self.is_decoder else None
        position_bias = None  # block_0 computes it; every later block receives it
        for i in range(self.num_layers):
            x, position_bias = T5Block(
                self.d_model, self.num_heads, self.d_ff, self.is_decoder, i == 0,
                self.num_buckets, self.max_distance, name=f"block_{i}",
            )(x, position_bias, mask, memory)
        return T5LayerNorm(self.d_model, name="final_layer_norm")(x)


class T5Model(nn.Module):
    vocab_size: int
    d_model: int
    num_heads: int
    d_ff: int
    num_enc_layers: int
    num_dec_layers: int
    num_buckets: int
    max_distance: int

    @nn.compact
    def __call__(self, enc_ids, dec_ids):
        shared = nn.Embed(
            self.vocab_size, self.d_model, embedding_init=nn.initializers.normal(stddev=1.0), name="shared"
        )
        sizes = dict(d_model=self.d_model, num_heads=self.num_heads, d_ff=self.d_ff,
                     num_buckets=self.num_buckets, max_distance=self.max_distance)
        memory = T5Stack(num_layers=self.num_enc_layers, is_decoder=False, name="encoder", **sizes)(shared(enc_ids))
        y = T5Stack(num_layers=self.num_dec_layers, is_decoder=True, name="decoder", **sizes)(shared(dec_ids), memory)
        return shared.attend(y * self.d_model**-0.5)  # (T_dec, V)


def t5_forward(
    seed,
    x_enc_ids,
    x_dec_ids,
    vocab_size,
    d_model,
    num_heads,
    d_ff,
    num_enc_layers,
    num_dec_layers,
    num_buckets,
    max_distance,
):
    """Same contract as the reference: (T_dec * V,) float32 logits."""
    model = T5Model(
        int(vocab_size), int(d_model), int(num_heads), int(d_ff), int(num_enc_layers),
        int(num_dec_layers), int(num_buckets), int(max_distance),
    )
    enc_ids = jnp.asarray(x_enc_ids).astype(jnp.int32)  # (T_enc,)
    dec_ids = jnp.asarray(x_dec_ids).astype(jnp.int32)  # (T_dec,)
    variables = model.init(jax.random.PRNGKey(int(seed)), enc_ids, dec_ids)
    return model.apply(variables, enc_ids, dec_ids).reshape(-1)  # (T_dec * V,)
