"""Correct alternative: a Python loop over heads on column slices, a hand-written softmax,
buckets computed in plain Python on the known positions, and plain model.init.

The parts written alike are the reference's (subclassed below, each with only what it writes
differently), so that the module tree is declared once."""

import math
import jax
import numpy as np
import jax.numpy as jnp
import flax.linen as nn

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
    rel = np.asarray(relative_position)  # positions are known before any array is traced
    buckets = np.zeros(rel.shape, dtype=np.int32)
    for index, r in np.ndenumerate(rel):
        r = int(r)
        if bidirectional:
            nb = num_buckets // 2
            bucket = nb if r > 0 else 0
            n = abs(r)
        else:
            nb = num_buckets
            bucket = 0
            n = max(-r, 0)
        max_exact = nb // 2
        if n < max_exact:
            bucket += n
        else:
            steps = int(math.log(n / max_exact) / math.log(max_distance / max_exact) * (nb - max_exact))
            bucket += min(max_exact + steps, nb - 1)
        buckets[index] = bucket
    return buckets


class T5LayerNorm(reference.T5LayerNorm):
    """T5's layer norm (RMSNorm): scales each row by its root mean square, no centring."""

    def __call__(self, x):
        """Normalises each row of `x` by its root mean square, then scales by `weight`.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32: weight * x / sqrt(mean(x**2, last axis) + eps).
        """
        D = x.shape[-1]
        mean_square = jnp.sum(x**2, axis=-1, keepdims=True) / D  # (T, 1)
        return self.weight * (x / jnp.sqrt(mean_square + self.eps))


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
        rel = np.arange(key_length)[None, :] - np.arange(query_length)[:, None]  # (T_q, T_k), j - i
        buckets = relative_position_bucket(rel, self.bidirectional, self.num_buckets, self.max_distance)
        return jnp.stack([self.embedding[buckets, h] for h in range(self.num_heads)])  # (H, T_q, T_k)


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
        q, k, v = self.q(x), self.k(context), self.v(context)  # (T_q|T_k, D)
        outputs = []
        for h in range(self.num_heads):
            cols = slice(h * hd, (h + 1) * hd)  # head h owns these columns
            scores = q[:, cols] @ k[:, cols].T  # (T_q, T_k), no 1/sqrt(hd) in T5
            if position_bias is not None:
                scores = scores + position_bias[h]
            if mask is not None:
                scores = jnp.where(mask, scores, -1e9)
            scores = scores - scores.max(axis=-1, keepdims=True)
            weights = jnp.exp(scores)
            weights = weights / weights.sum(axis=-1, keepdims=True)  # (T_q, T_k)
            outputs.append(weights @ v[:, cols])  # (T_q, hd)
        return self.o(jnp.concatenate(outputs, axis=-1))  # (T_q, D)


class T5DenseReluDense(reference.T5DenseReluDense):
    """Position-wise feed-forward: Dense(d_ff) -> ReLU -> Dense(D), no biases."""

    def __call__(self, x):
        """Applies the same two-layer ReLU network to every row.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        hidden = nn.relu(self.wi(x))  # (T, d_ff)
        return self.wo(hidden)


class T5LayerCrossAttention(reference.T5LayerCrossAttention):
    """Pre-norm cross-attention sublayer: x + EncDecAttention(layer_norm(x), memory)."""

    def __call__(self, x, memory):
        """Runs the sublayer on the decoder stream; no position bias, no mask.

        Args:
            x: (T_dec, D) float32, the decoder stream.
            memory: (T_enc, D) float32, the encoder's final (normalised) output.

        Returns:
            (T_dec, D) float32.
        """
        # queries from the decoder stream; keys and values from the encoder's memory
        h = self.layer_norm(x)
        return x + self.EncDecAttention(h, memory)


class T5LayerFF(reference.T5LayerFF):
    """Pre-norm feed-forward sublayer: x + DenseReluDense(layer_norm(x))."""

    def __call__(self, x):
        """Runs the sublayer on the stream.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        h = self.layer_norm(x)
        return x + self.DenseReluDense(h)


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
        for layer in self.layer:
            if isinstance(layer, reference.T5LayerSelfAttention):
                x = layer(x, position_bias, mask)
            elif isinstance(layer, T5LayerCrossAttention):
                x = layer(x, memory)
            else:
                x = layer(x)
        return x


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
        bias = None
        for i, block in enumerate(self.block):
            if i == 0:  # the first block's table, asked once; the same bias for every block
                bias = block.layer[0].SelfAttention.relative_attention_bias(T, T)  # (H, T, T)
            causal = np.tril(np.ones((T, T), dtype=bool)) if self.is_decoder else None
            x = block(x, bias, causal, memory)
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
        table = self.shared.embedding  # (V, D)
        memory = self.encoder(self.shared(enc_ids))  # (T_enc, D)
        y = self.decoder(self.shared(dec_ids), memory)  # (T_dec, D)
        return (y @ table.T) * self.d_model**-0.5  # (T_dec, V): rescaling after the product is the same


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
        x_enc_ids: (T_enc,) float32 holding integer token ids in [0, vocab_size).
        x_dec_ids: (T_dec,) float32 holding integer token ids in [0, vocab_size).
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
    variables = model.init(jax.random.PRNGKey(int(seed)), enc_ids, dec_ids)  # plain init
    logits = model.apply(variables, enc_ids, dec_ids)  # (T_dec, V)
    return logits.reshape(-1)  # (T_dec * V,)


override(reference, relative_position_bucket, T5LayerNorm, T5RelativePositionBias, T5Attention, T5DenseReluDense, T5LayerCrossAttention, T5LayerFF, T5Block, T5Stack, T5Model)  # the reference's modules build these parts
