"""Correct alternative: attention with einsum, the bias looked up by a one-hot product,
buckets floored with jnp.floor, the head as Embed.attend.

The parts written alike are the reference's (subclassed below, each with only what it writes
differently), so that the module tree is declared once."""

import jax
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
    nb = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        offset = (relative_position > 0).astype(jnp.int32) * nb
        n = jnp.abs(relative_position)
    else:
        offset = 0
        n = jnp.where(relative_position < 0, -relative_position, 0)
    max_exact = nb // 2
    safe = jnp.where(n >= max_exact, n, max_exact).astype(jnp.float32)  # (T_q, T_k), never 0
    fraction = jnp.log(safe / max_exact) / jnp.log(jnp.float32(max_distance / max_exact))
    large = max_exact + jnp.floor(fraction * (nb - max_exact)).astype(jnp.int32)
    return offset + jnp.where(n < max_exact, n, jnp.minimum(large, nb - 1))


class T5LayerNorm(reference.T5LayerNorm):
    """T5's layer norm (RMSNorm): scales each row by its root mean square, no centring."""

    def __call__(self, x):
        """Normalises each row of `x` by its root mean square, then scales by `weight`.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32: weight * x / sqrt(mean(x**2, last axis) + eps).
        """
        rms = jnp.sqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + self.eps)  # (T, 1)
        return x / rms * self.weight


class T5RelativePositionBias(reference.T5RelativePositionBias):
    """The learned relative position bias: one scalar per bucket and head."""

    def __call__(self, query_length, key_length):
        """Looks up every (query i, key j) pair's bias, for every head.

        Args:
            query_length: Python int T_q.
            key_length: Python int T_k.

        Returns:
            (H, T_q, T_k) float32: [h, i, j] = embedding[bucket of j - i, h].
        """
        rel = jnp.arange(key_length)[None, :] - jnp.arange(query_length)[:, None]  # (T_q, T_k), j - i
        buckets = relative_position_bucket(rel, self.bidirectional, self.num_buckets, self.max_distance)
        onehot = jax.nn.one_hot(buckets, self.num_buckets, dtype=jnp.float32)  # (T_q, T_k, N)
        return jnp.einsum("qkn,nh->hqk", onehot, self.embedding)  # (H, T_q, T_k)


class T5Attention(reference.T5Attention):
    """Multi-head attention without score scaling, with an optional position bias."""

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
        hd = self.d_model // self.num_heads
        q = self.q(x).reshape(x.shape[0], self.num_heads, hd)  # (T_q, H, hd)
        k = self.k(context).reshape(context.shape[0], self.num_heads, hd)  # (T_k, H, hd)
        v = self.v(context).reshape(context.shape[0], self.num_heads, hd)  # (T_k, H, hd)
        scores = jnp.einsum("qhd,khd->hqk", q, k)  # (H, T_q, T_k), unscaled
        if position_bias is not None:
            scores += position_bias
        if mask is not None:
            scores = jnp.where(mask, scores, -1e9)  # (T_q, T_k) broadcasts over heads
        weights = jax.nn.softmax(scores, axis=-1)
        heads = jnp.einsum("hqk,khd->qhd", weights, v)  # (T_q, H, hd)
        return self.o(heads.reshape(x.shape[0], self.d_model))  # (T_q, D)


class T5DenseReluDense(reference.T5DenseReluDense):
    """Position-wise feed-forward: Dense(d_ff) -> ReLU -> Dense(D), no biases."""

    def __call__(self, x):
        """Applies the same two-layer ReLU network to every row.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        return self.wo(jnp.maximum(self.wi(x), 0.0))


class T5LayerSelfAttention(reference.T5LayerSelfAttention):
    """Pre-norm self-attention sublayer: x + SelfAttention(layer_norm(x))."""

    def __call__(self, x, position_bias, mask=None):
        """Runs the sublayer on the stream.

        Args:
            x: (T, D) float32, the stream.
            position_bias: (H, T, T) float32, the stack's shared bias.
            mask: optional (T, T) bool, True where query i may see key j.

        Returns:
            (T, D) float32.
        """
        normed = self.layer_norm(x)
        return x + self.SelfAttention(normed, normed, position_bias=position_bias, mask=mask)


class T5Block(reference.T5Block):
    """One block: self-attention, cross-attention (decoder only), feed-forward."""

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
        self_attention, *rest = self.layer
        x = self_attention(x, position_bias, mask)
        if self.is_decoder:
            cross_attention, feed_forward = rest
            x = cross_attention(x, memory)
        else:
            (feed_forward,) = rest
        return feed_forward(x)


class T5Stack(reference.T5Stack):
    """The encoder or the decoder: blocks sharing one position bias, then a final norm."""

    def __call__(self, x, memory=None):
        """Runs the blocks on the embedded sequence, then the final norm.

        Args:
            x: (T, D) float32, the embedded token ids.
            memory: (T_enc, D) float32, the encoder's output; the decoder only.

        Returns:
            (T, D) float32, normalised by final_layer_norm.
        """
        T = x.shape[0]
        first_attention = self.block[0].layer[0].SelfAttention
        bias = first_attention.relative_attention_bias(T, T)  # (H, T, T), shared by all blocks
        mask = None
        if self.is_decoder:
            pos = jnp.arange(T)
            mask = pos[None, :] <= pos[:, None]  # (T, T), key j at or before query i
        for layer in self.block:
            x = layer(x, bias, mask=mask, memory=memory)
        return self.final_layer_norm(x)


class T5Model(reference.T5Model):
    """T5 encoder-decoder whose one embedding is also the output head."""

    def __call__(self, enc_ids, dec_ids):
        """Encodes `enc_ids`, decodes `dec_ids` against it, returns next-token logits.

        Args:
            enc_ids: (T_enc,) int32 encoder token ids.
            dec_ids: (T_dec,) int32 decoder token ids.

        Returns:
            (T_dec, V) float32 logits.
        """
        memory = self.encoder(self.shared(enc_ids))  # (T_enc, D)
        y = self.decoder(self.shared(dec_ids), memory=memory)  # (T_dec, D)
        return self.shared.attend(y / jnp.sqrt(jnp.float32(self.d_model)))  # (T_dec, V)


t5_forward = override(reference, relative_position_bucket, T5LayerNorm, T5RelativePositionBias, T5Attention, T5DenseReluDense, T5LayerSelfAttention, T5Block, T5Stack, T5Model)
