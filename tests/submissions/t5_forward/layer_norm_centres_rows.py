"""T5 (v1.0): an encoder-decoder Transformer with a shared relative position bias per stack.

The module tree (names, shapes, initialisers) is fixed in each `setup()` and named after
Hugging Face's T5 modules, so that a PyTorch T5 state dict maps onto it one to one. Flax
derives every parameter's random key from its path, so keep the tree as given.
What earlier katas taught comes given, complete: the buckets, T5's LayerNorm, the bias
module, attention and the feed-forward. Read them: your code calls them.
Your task: write the six `__call__` bodies marked TODO, what is new here: the three
pre-norm residual sublayers, the block, the stack (one bias shared by every block, the
causal mask) and the model (one embedding, the tied head with its rescale).
The entry function at the bottom is already wired (parameters from the seed, apply,
flatten); leave it as it is.
"""

import math  # noqa: F401

import jax
import numpy as np  # noqa: F401
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

    The positions are known before anything is traced (the lengths are Python ints), so
    this may work on NumPy arrays: then it costs nothing to compile. JAX arrays work too.

    Args:
        relative_position: (T_q, T_k) integer array, key position j minus query position i.
        bidirectional: Python bool, True for the encoder, False for the decoder.
        num_buckets: Python int, the number of buckets N (even, >= 4).
        max_distance: Python int > N // 2, where the log-spaced buckets stop growing.

    Returns:
        (T_q, T_k) integer array of bucket indices in [0, num_buckets).
    """
    if bidirectional:
        nb = num_buckets // 2  # buckets per direction
        offset = np.where(relative_position > 0, nb, 0)  # keys after the query: upper half
        size = np.abs(relative_position)
    else:
        nb = num_buckets
        offset = np.zeros_like(relative_position)
        size = np.maximum(-relative_position, 0)  # keys after the query count as size 0
    max_exact = nb // 2
    # log(size / max_exact) for size >= max_exact; the small sizes take the other branch
    # below, so raising them to max_exact only keeps log(0) out of the computation.
    log_ratio = np.log(np.maximum(size, max_exact) / max_exact)
    scaled = log_ratio / math.log(max_distance / max_exact) * (nb - max_exact)  # (T_q, T_k)
    large = np.minimum(max_exact + scaled.astype(np.int64), nb - 1)  # floor, then cap
    return (offset + np.where(size < max_exact, size, large)).astype(np.int32)


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
        """Normalises each row of `x` by its root mean square, then scales by `weight`.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32: weight * x / sqrt(mean(x**2, last axis) + eps).
        """
        centred = x - x.mean(axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(centred), axis=-1, keepdims=True)  # (T, 1)
        return self.weight * centred / jnp.sqrt(var + self.eps)


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
        """Looks up every (query i, key j) pair's bias, for every head.

        Args:
            query_length: Python int T_q.
            key_length: Python int T_k.

        Returns:
            (H, T_q, T_k) float32: [h, i, j] = embedding[bucket of j - i, h].
        """
        query_pos = np.arange(query_length)  # (T_q,)
        key_pos = np.arange(key_length)  # (T_k,)
        relative_position = key_pos[None, :] - query_pos[:, None]  # (T_q, T_k), j - i
        buckets = relative_position_bucket(
            relative_position, self.bidirectional, self.num_buckets, self.max_distance
        )  # (T_q, T_k)
        values = self.embedding[buckets]  # (T_q, T_k, H)
        return values.transpose(2, 0, 1)  # (H, T_q, T_k)


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
        """Lets each row of `x` attend over the rows of `context`.

        Self-attention passes the same array as `x` and `context`; cross-attention
        passes the decoder stream as `x` and the encoder output as `context`.

        Args:
            x: (T_q, D) float32, where the queries come from.
            context: (T_k, D) float32, where the keys and values come from.
            position_bias: optional (H, T_q, T_k) float32, added to the scores.
            mask: optional (T_q, T_k) bool, True where query i may see key j.
                None means every query sees every key.

        Returns:
            (T_q, D) float32.
        """
        T_q, T_k = x.shape[0], context.shape[0]
        H = self.num_heads
        hd = self.d_model // H
        q = self.q(x).reshape(T_q, H, hd).transpose(1, 0, 2)  # (H, T_q, hd)
        k = self.k(context).reshape(T_k, H, hd).transpose(1, 0, 2)  # (H, T_k, hd)
        v = self.v(context).reshape(T_k, H, hd).transpose(1, 0, 2)  # (H, T_k, hd)
        scores = q @ k.transpose(0, 2, 1)  # (H, T_q, T_k); T5 does not scale the scores
        if position_bias is not None:
            scores = scores + position_bias
        if mask is not None:
            scores = jnp.where(mask[None, :, :], scores, MASK_VALUE)
        weights = jax.nn.softmax(scores, axis=-1)  # each query's weights sum to 1
        heads = weights @ v  # (H, T_q, hd)
        merged = heads.transpose(1, 0, 2).reshape(T_q, self.d_model)  # (T_q, D)
        return self.o(merged)


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
        """Applies the same two-layer ReLU network to every row.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        return self.wo(nn.relu(self.wi(x)))


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
        """Runs the sublayer on the stream.

        Args:
            x: (T, D) float32, the stream.
            position_bias: (H, T, T) float32, the stack's shared bias.
            mask: optional (T, T) bool, True where query i may see key j.

        Returns:
            (T, D) float32.
        """
        y = self.layer_norm(x)
        return x + self.SelfAttention(x=y, context=y, position_bias=position_bias, mask=mask)


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
        """Runs the sublayer on the decoder stream; no position bias, no mask.

        Args:
            x: (T_dec, D) float32, the decoder stream.
            memory: (T_enc, D) float32, the encoder's final (normalised) output.

        Returns:
            (T_dec, D) float32.
        """
        # queries from the decoder stream; keys and values from the encoder's memory
        q_in = self.layer_norm(x)
        return x + self.EncDecAttention(q_in, memory, position_bias=None, mask=None)


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
        """Runs the sublayer on the stream.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        hidden = self.layer_norm(x)
        hidden = self.DenseReluDense(hidden)
        return x + hidden


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
        """Runs the block's sublayers in order.

        Args:
            x: (T, D) float32, the stream.
            position_bias: (H, T, T) float32, the stack's shared bias.
            mask: optional (T, T) bool for the self-attention (the decoder's causal mask).
            memory: (T_enc, D) float32, the encoder's output; decoder blocks only.

        Returns:
            (T, D) float32.
        """
        sa, *others = self.layer
        x = sa(x, position_bias, mask=mask)
        for sub in others:
            if isinstance(sub, T5LayerCrossAttention):
                x = sub(x, memory)
            else:
                x = sub(x)
        return x


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
        """Runs the blocks on the embedded sequence, then the final norm.

        Args:
            x: (T, D) float32, the embedded token ids.
            memory: (T_enc, D) float32, the encoder's output; the decoder only.

        Returns:
            (T, D) float32, normalised by final_layer_norm.
        """
        length = x.shape[-2]
        table = self.block[0].layer[0].SelfAttention.relative_attention_bias
        shared_bias = table(length, length)
        if self.is_decoder:
            pos = jnp.arange(length)
            mask = pos[:, None] >= pos[None, :]  # query i sees keys j <= i
        else:
            mask = None
        for layer_module in self.block:
            x = layer_module(x, shared_bias, mask, memory)
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
        """Encodes `enc_ids`, decodes `dec_ids` against it, returns next-token logits.

        Args:
            enc_ids: (T_enc,) int32 encoder token ids.
            dec_ids: (T_dec,) int32 decoder token ids.

        Returns:
            (T_dec, V) float32 logits.
        """
        scale = 1.0 / jnp.sqrt(jnp.float32(self.d_model))
        memory = self.encoder(self.shared(enc_ids))
        out = self.decoder(self.shared(dec_ids), memory)
        logits = (out * scale) @ self.shared.embedding.T
        return logits


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
    """Initialises a T5Model from `seed` and returns its logits for one input pair.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x_enc_ids: (T_enc,) int32 token ids in [0, vocab_size).
        x_dec_ids: (T_dec,) int32 token ids in [0, vocab_size).
        vocab_size: int, V.
        d_model: int, D, divisible by num_heads.
        num_heads: int, H.
        d_ff: int, feed-forward hidden width.
        num_enc_layers: int >= 1, encoder blocks.
        num_dec_layers: int >= 1, decoder blocks.
        num_buckets: int, even and >= 4, relative position buckets N.
        max_distance: int > num_buckets // 2, where the log-spaced buckets stop growing.

    Returns:
        (T_dec * V,) float32: the (T_dec, V) logits flattened row by row.
    """
    model = T5Model(
        vocab_size=int(vocab_size),
        d_model=int(d_model),
        num_heads=int(num_heads),
        d_ff=int(d_ff),
        num_enc_layers=int(num_enc_layers),
        num_dec_layers=int(num_dec_layers),
        num_buckets=int(num_buckets),
        max_distance=int(max_distance),
    )
    enc_ids = jnp.asarray(x_enc_ids).astype(jnp.int32)  # (T_enc,)
    dec_ids = jnp.asarray(x_dec_ids).astype(jnp.int32)  # (T_dec,)
    # lazy_init traces the forward on the inputs' shapes only, and ensure_compile_time_eval makes
    # the parameters concrete even under jax.jit: the random initialisers stay out of the
    # compiled program, which makes compiling fast.
    shapes = [jax.ShapeDtypeStruct(ids.shape, ids.dtype) for ids in (enc_ids, dec_ids)]
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), *shapes)
    logits = model.apply(variables, enc_ids, dec_ids)  # (T_dec, V)
    return logits.reshape(-1)  # (T_dec * V,)
