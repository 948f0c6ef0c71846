"""Correct alternative: the forward pass in numpy float64 on the parameter tree.

The modules keep the reference's setup() (it fixes the parameters); their bodies only touch
every submodule so that init creates every parameter. The maths is the numpy code below.

The parts written alike are the reference's (subclassed below, each with only what it writes
differently), so that the module tree is declared once."""

import jax
import numpy as np
import jax.numpy as jnp

from grader.variant import override, reference_of

reference = reference_of(__file__)
MASK_VALUE = reference.MASK_VALUE


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Sorts every offset j - i into one of T5's `num_buckets` buckets.

    Bidirectional (encoder): keys after the query (j > i) use the upper half of the
    buckets, keys at or before it the lower half; within a half the size |j - i| is
    bucketed. One-directional (decoder): keys after the query all get bucket 0, and
    every bucket serves the size i - j of keys at or before it. Within the buckets nb
    of one direction, sizes below nb // 2 get one bucket each, larger sizes share
    log-spaced buckets up to `max_distance`, and anything beyond lands in bucket nb - 1.

    Args:
        relative_position: (T_q, T_k) integer NumPy array, key position j minus query position i.
        bidirectional: Python bool, True for the encoder, False for the decoder.
        num_buckets: Python int, the number of buckets N (even, >= 4).
        max_distance: Python int > N // 2, where the log-spaced buckets stop growing.

    Returns:
        (T_q, T_k) int64 NumPy array of bucket indices in [0, num_buckets).
    """
    rel = np.asarray(relative_position, dtype=np.int64)
    if bidirectional:
        nb = num_buckets // 2
        bucket = np.where(rel > 0, nb, 0)
        n = np.abs(rel)
    else:
        nb = num_buckets
        bucket = np.zeros_like(rel)
        n = np.maximum(-rel, 0)
    max_exact = nb // 2
    with np.errstate(divide="ignore"):  # log(0) where n = 0: that branch is not taken
        large = max_exact + np.floor(
            np.log(n / max_exact) / np.log(max_distance / max_exact) * (nb - max_exact)
        )
    large = np.minimum(np.nan_to_num(large, neginf=0).astype(np.int64), nb - 1)
    return bucket + np.where(n < max_exact, n, large)


class T5LayerNorm(reference.T5LayerNorm):
    """T5's layer norm (RMSNorm): scales each row by its root mean square, no centring."""

    def __call__(self, x):
        return x * self.weight


class T5RelativePositionBias(reference.T5RelativePositionBias):
    """The learned relative position bias: one scalar per bucket and head."""

    def __call__(self, query_length, key_length):
        return self.embedding


class T5Attention(reference.T5Attention):
    """Multi-head attention without score scaling, with an optional position bias."""

    def __call__(self, x, context, position_bias=None, mask=None):
        self.k(context), self.v(context)
        out = self.o(self.q(x))
        if self.has_relative_attention_bias:
            self.relative_attention_bias(1, 1)
        return out


class T5DenseReluDense(reference.T5DenseReluDense):
    """Position-wise feed-forward: Dense(d_ff) -> ReLU -> Dense(D), no biases."""

    def __call__(self, x):
        return self.wo(self.wi(x))


class T5LayerSelfAttention(reference.T5LayerSelfAttention):
    """Pre-norm self-attention sublayer: x + SelfAttention(layer_norm(x))."""

    def __call__(self, x, position_bias, mask=None):
        return self.SelfAttention(self.layer_norm(x), x)


class T5LayerCrossAttention(reference.T5LayerCrossAttention):
    """Pre-norm cross-attention sublayer: x + EncDecAttention(layer_norm(x), memory)."""

    def __call__(self, x, memory):
        # queries from the decoder stream; keys and values from the encoder's memory
        return self.EncDecAttention(self.layer_norm(x), memory)


class T5LayerFF(reference.T5LayerFF):
    """Pre-norm feed-forward sublayer: x + DenseReluDense(layer_norm(x))."""

    def __call__(self, x):
        return self.DenseReluDense(self.layer_norm(x))


class T5Block(reference.T5Block):
    """One block: self-attention, cross-attention (decoder only), feed-forward."""

    def __call__(self, x, position_bias, mask=None, memory=None):
        x = self.layer[0](x, None)
        if self.is_decoder:
            x = self.layer[1](x, memory)
        return self.layer[-1](x)


class T5Stack(reference.T5Stack):
    """The encoder or the decoder: blocks sharing one position bias, then a final norm."""

    def __call__(self, x, memory=None):
        for block in self.block:
            x = block(x, None, None, memory)
        return self.final_layer_norm(x)


class T5Model(reference.T5Model):
    """T5 encoder-decoder whose one embedding is also the output head."""

    def __call__(self, enc_ids, dec_ids):
        memory = self.encoder(self.shared(enc_ids))
        return self.decoder(self.shared(dec_ids), memory)


def np_layer_norm(p, x, eps=1e-6):
    return p["weight"] * x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)


def np_softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_attention(p, x, context, num_heads, bias=None, causal=False):
    """x: (T_q, D), context: (T_k, D), bias: (H, T_q, T_k) or None -> (T_q, D)."""
    T_q, D = x.shape
    T_k = context.shape[0]
    hd = D // num_heads
    q = (x @ p["q"]["kernel"]).reshape(T_q, num_heads, hd).transpose(1, 0, 2)  # (H, T_q, hd)
    k = (context @ p["k"]["kernel"]).reshape(T_k, num_heads, hd).transpose(1, 0, 2)
    v = (context @ p["v"]["kernel"]).reshape(T_k, num_heads, hd).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1)  # (H, T_q, T_k), unscaled
    if bias is not None:
        scores = scores + bias
    if causal:
        scores = np.where(np.tril(np.ones((T_q, T_k), dtype=bool)), scores, -np.inf)
    heads = np_softmax(scores) @ v  # (H, T_q, hd)
    return heads.transpose(1, 0, 2).reshape(T_q, D) @ p["o"]["kernel"]


def np_bias(table, T, bidirectional, num_buckets, max_distance):
    """table: (N, H) -> (H, T, T)."""
    rel = np.arange(T)[None, :] - np.arange(T)[:, None]  # (T, T), j - i
    buckets = relative_position_bucket(rel, bidirectional, num_buckets, max_distance)
    return table[buckets].transpose(2, 0, 1)  # (H, T, T)


def np_stack(p, x, num_layers, H, N, max_distance, memory=None):
    decoder = memory is not None
    first = p["block_0"]["layer_0"]["SelfAttention"]["relative_attention_bias"]["embedding"]
    bias = np_bias(first, x.shape[0], not decoder, N, max_distance)  # shared by every block
    for i in range(num_layers):
        b = p[f"block_{i}"]
        sa = b["layer_0"]
        h = np_layer_norm(sa["layer_norm"], x)
        x = x + np_attention(sa["SelfAttention"], h, h, H, bias, causal=decoder)
        if decoder:
            ca = b["layer_1"]
            x = x + np_attention(ca["EncDecAttention"], np_layer_norm(ca["layer_norm"], x), memory, H)
        ff = b[f"layer_{2 if decoder else 1}"]
        h = np_layer_norm(ff["layer_norm"], x)
        x = x + np.maximum(h @ ff["DenseReluDense"]["wi"]["kernel"], 0.0) @ ff["DenseReluDense"]["wo"]["kernel"]
    return np_layer_norm(p["final_layer_norm"], x)


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
    H, N, md = int(num_heads), int(num_buckets), int(max_distance)
    model = T5Model(
        int(vocab_size), int(d_model), H, int(d_ff), int(num_enc_layers), int(num_dec_layers), N, md
    )
    enc_ids = np.asarray(x_enc_ids).astype(np.int64)  # (T_enc,)
    dec_ids = np.asarray(x_dec_ids).astype(np.int64)  # (T_dec,)
    variables = model.init(jax.random.PRNGKey(int(seed)), jnp.asarray(enc_ids), jnp.asarray(dec_ids))
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), variables["params"])

    table = p["shared"]["embedding"]  # (V, D)
    memory = np_stack(p["encoder"], table[enc_ids], int(num_enc_layers), H, N, md)  # (T_enc, D)
    y = np_stack(p["decoder"], table[dec_ids], int(num_dec_layers), H, N, md, memory)  # (T_dec, D)
    logits = (y * int(d_model) ** -0.5) @ table.T  # (T_dec, V)
    return logits.astype(np.float32).reshape(-1)  # (T_dec * V,)


override(reference, relative_position_bucket, T5LayerNorm, T5RelativePositionBias, T5Attention, T5DenseReluDense, T5LayerSelfAttention, T5LayerCrossAttention, T5LayerFF, T5Block, T5Stack, T5Model)  # the reference's modules build these parts
