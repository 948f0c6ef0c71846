"""Correct alternative: the forward pass in numpy float64 on the parameter tree.

The modules keep the reference's setup() (it fixes the parameters); their bodies only touch
every submodule so that init creates every parameter. The maths is the numpy code below.
"""

import jax
import numpy as np
import jax.numpy as jnp
import flax.linen as nn

# Replaces the score of a key that a query may not see: softmax then gives it weight 0.
MASK_VALUE = jnp.finfo(jnp.float32).min


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


class T5LayerNorm(nn.Module):
    """T5's layer norm (RMSNorm): scales each row by its root mean square, no centring.

    Attributes:
        d_model: size D of the last axis.
        eps: added to the mean square before the square root.
    """

    d_model: int
    eps: float = 1e-6

    def setup(self):
        self.weight = self.param("weight", nn.initializers.ones, (self.d_model,))  # (D,)

    def __call__(self, x):
        return x * self.weight


class T5RelativePositionBias(nn.Module):
    """The learned relative position bias: one scalar per bucket and head.

    Attributes:
        num_buckets: N, rows of the table.
        num_heads: H, columns of the table.
        bidirectional: True in the encoder, False in the decoder.
        max_distance: where the log-spaced buckets stop growing.
    """

    num_buckets: int
    num_heads: int
    bidirectional: bool
    max_distance: int

    def setup(self):
        self.embedding = self.param(
            "embedding", nn.initializers.normal(stddev=1.0), (self.num_buckets, self.num_heads)
        )  # (N, H), standard normal

    def __call__(self, query_length, key_length):
        return self.embedding


class T5Attention(nn.Module):
    """Multi-head attention without score scaling, with an optional position bias.

    Attributes:
        d_model: model width D; every projection maps D -> D.
        num_heads: number of heads H; D must be divisible by H.
        has_relative_attention_bias: whether this attention owns its stack's bias table
            (only the first block's self-attention does).
        bidirectional: which buckets the table uses (True in the encoder).
        num_buckets: N, rows of the bias table.
        max_distance: the bias table's max_distance.
    """

    d_model: int
    num_heads: int
    has_relative_attention_bias: bool = False
    bidirectional: bool = True
    num_buckets: int = 32
    max_distance: int = 128

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.k = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.v = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.o = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = T5RelativePositionBias(
                num_buckets=self.num_buckets,
                num_heads=self.num_heads,
                bidirectional=self.bidirectional,
                max_distance=self.max_distance,
            )  # embedding (N, H)

    def __call__(self, x, context, position_bias=None, mask=None):
        self.k(context), self.v(context)
        out = self.o(self.q(x))
        if self.has_relative_attention_bias:
            self.relative_attention_bias(1, 1)
        return out


class T5DenseReluDense(nn.Module):
    """Position-wise feed-forward: Dense(d_ff) -> ReLU -> Dense(D), no biases.

    Attributes:
        d_model: model width D.
        d_ff: hidden width.
    """

    d_model: int
    d_ff: int

    def setup(self):
        self.wi = nn.Dense(self.d_ff, use_bias=False)  # kernel (D, d_ff)
        self.wo = nn.Dense(self.d_model, use_bias=False)  # kernel (d_ff, D)

    def __call__(self, x):
        return self.wo(self.wi(x))


class T5LayerSelfAttention(nn.Module):
    """Pre-norm self-attention sublayer: x + SelfAttention(layer_norm(x)).

    Attributes:
        d_model: model width D.
        num_heads: attention heads H.
        has_relative_attention_bias: whether its attention owns the stack's bias table.
        bidirectional: True in the encoder, False in the decoder.
        num_buckets: N, rows of the bias table.
        max_distance: the bias table's max_distance.
    """

    d_model: int
    num_heads: int
    has_relative_attention_bias: bool
    bidirectional: bool
    num_buckets: int
    max_distance: int

    def setup(self):
        self.SelfAttention = T5Attention(
            d_model=self.d_model,
            num_heads=self.num_heads,
            has_relative_attention_bias=self.has_relative_attention_bias,
            bidirectional=self.bidirectional,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )
        self.layer_norm = T5LayerNorm(self.d_model)

    def __call__(self, x, position_bias, mask=None):
        return self.SelfAttention(self.layer_norm(x), x)


class T5LayerCrossAttention(nn.Module):
    """Pre-norm cross-attention sublayer: x + EncDecAttention(layer_norm(x), memory).

    Attributes:
        d_model: model width D.
        num_heads: attention heads H.
    """

    d_model: int
    num_heads: int

    def setup(self):
        self.EncDecAttention = T5Attention(d_model=self.d_model, num_heads=self.num_heads)
        self.layer_norm = T5LayerNorm(self.d_model)

    def __call__(self, x, memory):
        # queries from the decoder stream; keys and values from the encoder's memory
        return self.EncDecAttention(self.layer_norm(x), memory)


class T5LayerFF(nn.Module):
    """Pre-norm feed-forward sublayer: x + DenseReluDense(layer_norm(x)).

    Attributes:
        d_model: model width D.
        d_ff: feed-forward hidden width.
    """

    d_model: int
    d_ff: int

    def setup(self):
        self.DenseReluDense = T5DenseReluDense(d_model=self.d_model, d_ff=self.d_ff)
        self.layer_norm = T5LayerNorm(self.d_model)

    def __call__(self, x):
        return self.DenseReluDense(self.layer_norm(x))


class T5Block(nn.Module):
    """One block: self-attention, cross-attention (decoder only), feed-forward.

    Attributes:
        d_model: model width D.
        num_heads: attention heads H.
        d_ff: feed-forward hidden width.
        is_decoder: False: layer_0 self-attention, layer_1 feed-forward. True: layer_0
            self-attention, layer_1 cross-attention, layer_2 feed-forward.
        has_relative_attention_bias: True only for the first block of a stack.
        num_buckets: N, rows of the bias table.
        max_distance: the bias table's max_distance.
    """

    d_model: int
    num_heads: int
    d_ff: int
    is_decoder: bool
    has_relative_attention_bias: bool
    num_buckets: int
    max_distance: int

    def setup(self):
        # a list assigned in setup names its items layer_0, layer_1, ...
        layers = [
            T5LayerSelfAttention(
                d_model=self.d_model,
                num_heads=self.num_heads,
                has_relative_attention_bias=self.has_relative_attention_bias,
                bidirectional=not self.is_decoder,
                num_buckets=self.num_buckets,
                max_distance=self.max_distance,
            )
        ]
        if self.is_decoder:
            layers.append(T5LayerCrossAttention(d_model=self.d_model, num_heads=self.num_heads))
        layers.append(T5LayerFF(d_model=self.d_model, d_ff=self.d_ff))
        self.layer = layers

    def __call__(self, x, position_bias, mask=None, memory=None):
        x = self.layer[0](x, None)
        if self.is_decoder:
            x = self.layer[1](x, memory)
        return self.layer[-1](x)


class T5Stack(nn.Module):
    """The encoder or the decoder: blocks sharing one position bias, then a final norm.

    Attributes:
        d_model: model width D.
        num_heads: attention heads H.
        d_ff: feed-forward hidden width.
        num_layers: number of blocks.
        is_decoder: False for the encoder, True for the decoder.
        num_buckets: N, rows of the bias table.
        max_distance: the bias table's max_distance.
    """

    d_model: int
    num_heads: int
    d_ff: int
    num_layers: int
    is_decoder: bool
    num_buckets: int
    max_distance: int

    def setup(self):
        # a list assigned in setup names its items block_0, block_1, ...; only block_0
        # owns a bias table
        self.block = [
            T5Block(
                d_model=self.d_model,
                num_heads=self.num_heads,
                d_ff=self.d_ff,
                is_decoder=self.is_decoder,
                has_relative_attention_bias=(i == 0),
                num_buckets=self.num_buckets,
                max_distance=self.max_distance,
            )
            for i in range(self.num_layers)
        ]
        self.final_layer_norm = T5LayerNorm(self.d_model)

    def __call__(self, x, memory=None):
        for block in self.block:
            x = block(x, None, None, memory)
        return self.final_layer_norm(x)


class T5Model(nn.Module):
    """T5 encoder-decoder whose one embedding is also the output head.

    Attributes:
        vocab_size: V, number of token ids.
        d_model: D, model width.
        num_heads: H, attention heads per attention layer.
        d_ff: feed-forward hidden width.
        num_enc_layers: number of encoder blocks.
        num_dec_layers: number of decoder blocks.
        num_buckets: N, relative position buckets of each stack's bias table.
        max_distance: where the log-spaced buckets stop growing.
    """

    vocab_size: int
    d_model: int
    num_heads: int
    d_ff: int
    num_enc_layers: int
    num_dec_layers: int
    num_buckets: int
    max_distance: int

    def setup(self):
        self.shared = nn.Embed(
            self.vocab_size, self.d_model, embedding_init=nn.initializers.normal(stddev=1.0)
        )  # embedding (V, D), standard normal
        self.encoder = T5Stack(
            d_model=self.d_model,
            num_heads=self.num_heads,
            d_ff=self.d_ff,
            num_layers=self.num_enc_layers,
            is_decoder=False,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )
        self.decoder = T5Stack(
            d_model=self.d_model,
            num_heads=self.num_heads,
            d_ff=self.d_ff,
            num_layers=self.num_dec_layers,
            is_decoder=True,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )

    def __call__(self, enc_ids, dec_ids):
        memory = self.encoder(self.shared(enc_ids))
        return self.decoder(self.shared(dec_ids), memory)


# ---- numpy float64 forward on the parameter tree ----------------------------------------


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
