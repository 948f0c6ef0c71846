"""Mini T5: an encoder-decoder Transformer with RMSNorm and one shared embedding.

The module tree (names, shapes, initialisers) is fixed in each `setup()`:
Flax derives every parameter's random key from its path, so keep it as given.
RMSNorm, which the rmsnorm kata taught, comes given: read it, your code calls it.
Your task: write the five `__call__` bodies marked TODO. The entry function at the
bottom is already wired (parameters from the seed, apply, flatten); leave it as it is.
"""

import jax
import jax.numpy as jnp
import flax.linen as nn

# Replaces the score of a key that a query may not see: softmax then gives it weight 0.
MASK_VALUE = jnp.finfo(jnp.float32).min


class RMSNorm(nn.Module):
    """Root-mean-square norm over the last axis, with a learned scale and no bias.

    Attributes:
        d_model: size D of the last axis.
        eps: added to the mean square before the square root.
    """

    d_model: int
    eps: float = 1e-6

    def setup(self):
        self.gamma = self.param("gamma", nn.initializers.ones, (self.d_model,))  # (D,)

    def __call__(self, x):
        """Normalises each row of `x` by its root mean square, then scales by `gamma`.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32: gamma * x / sqrt(mean(x**2, last axis) + eps).
        """
        mean_square = jnp.mean(x * x, axis=-1, keepdims=True)  # (T, 1)
        return self.gamma * x * jax.lax.rsqrt(mean_square + self.eps)


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention without biases or position terms.

    Attributes:
        d_model: model width D; every projection maps D -> D.
        num_heads: number of heads H; D must be divisible by H.
    """

    d_model: int
    num_heads: int

    def setup(self):
        self.query = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.key = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.value = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.out = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)

    def __call__(self, x, context, mask=None):
        """Lets each row of `x` attend over the rows of `context`.

        Self-attention passes the same array as `x` and `context`; cross-attention
        passes the decoder stream as `x` and the encoder output as `context`.

        Args:
            x: (T_q, D) float32, where the queries come from.
            context: (T_k, D) float32, where the keys and values come from.
            mask: optional (T_q, T_k) bool, True where query i may see key j.
                None means every query sees every key.

        Returns:
            (T_q, D) float32.
        """
        dh = self.d_model // self.num_heads
        q_all = self.query(x)  # (T_q, D)
        k_all = self.key(context)  # (T_k, D)
        v_all = self.value(context)  # (T_k, D)
        outs = []
        for h in range(self.num_heads):
            lo, hi = h * dh, (h + 1) * dh
            s = q_all[:, lo:hi] @ k_all[:, lo:hi].T  # (T_q, T_k)
            if mask is not None:
                s = jnp.where(mask, s, MASK_VALUE)
            w = jax.nn.softmax(s, axis=-1)
            outs.append(w @ v_all[:, lo:hi])
        return self.out(jnp.concatenate(outs, axis=1))


class FeedForward(nn.Module):
    """Position-wise feed-forward: Dense(d_ff) -> ReLU -> Dense(D), no biases.

    Attributes:
        d_model: model width D.
        d_ff: hidden width.
    """

    d_model: int
    d_ff: int

    def setup(self):
        self.up = nn.Dense(self.d_ff, use_bias=False)  # kernel (D, d_ff)
        self.down = nn.Dense(self.d_model, use_bias=False)  # kernel (d_ff, D)

    def __call__(self, x):
        """Applies the same two-layer ReLU network to every row.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        hidden = self.up(x)  # (T, d_ff)
        hidden = jnp.maximum(hidden, 0.0)
        return self.down(hidden)


class EncoderBlock(nn.Module):
    """Pre-norm encoder block: bidirectional self-attention, then feed-forward.

    Attributes:
        d_model: model width D.
        num_heads: attention heads H.
        d_ff: feed-forward hidden width.
    """

    d_model: int
    num_heads: int
    d_ff: int

    def setup(self):
        self.self_attn_norm = RMSNorm(self.d_model)
        self.self_attn = MultiHeadAttention(self.d_model, self.num_heads)
        self.ffn_norm = RMSNorm(self.d_model)
        self.ffn = FeedForward(self.d_model, self.d_ff)

    def __call__(self, x):
        """Runs one encoder block; each sublayer is x + sublayer(norm(x)).

        Args:
            x: (T_enc, D) float32, the encoder stream.

        Returns:
            (T_enc, D) float32.
        """
        y = self.self_attn_norm(x)
        x = x + self.self_attn(y, y)
        y = self.ffn_norm(x)
        return x + self.ffn(y)


class DecoderBlock(nn.Module):
    """Pre-norm decoder block: causal self-attention, cross-attention, feed-forward.

    Attributes:
        d_model: model width D.
        num_heads: attention heads H.
        d_ff: feed-forward hidden width.
    """

    d_model: int
    num_heads: int
    d_ff: int

    def setup(self):
        self.self_attn_norm = RMSNorm(self.d_model)
        self.self_attn = MultiHeadAttention(self.d_model, self.num_heads)
        self.cross_attn_norm = RMSNorm(self.d_model)
        self.cross_attn = MultiHeadAttention(self.d_model, self.num_heads)
        self.ffn_norm = RMSNorm(self.d_model)
        self.ffn = FeedForward(self.d_model, self.d_ff)

    def __call__(self, x, memory):
        """Runs one decoder block; each sublayer is x + sublayer(norm(x)).

        Args:
            x: (T_dec, D) float32, the decoder stream.
            memory: (T_enc, D) float32, the encoder's final (normalised) output.

        Returns:
            (T_dec, D) float32.
        """
        T = x.shape[0]
        mask = jnp.tril(jnp.ones((T, T), dtype=jnp.bool_))
        h = self.self_attn_norm(x)
        x = x + self.self_attn(h, h, mask=mask)
        h = self.cross_attn_norm(x)
        x = x + self.cross_attn(h, memory)
        x = x + self.ffn(self.ffn_norm(x))
        return x


class MiniT5(nn.Module):
    """Encoder-decoder Transformer whose one embedding is also the output head.

    Attributes:
        vocab_size: V, number of token ids.
        d_model: D, model width.
        num_heads: H, attention heads per attention layer.
        d_ff: feed-forward hidden width.
        num_enc_layers: number of encoder blocks.
        num_dec_layers: number of decoder blocks.
    """

    vocab_size: int
    d_model: int
    num_heads: int
    d_ff: int
    num_enc_layers: int
    num_dec_layers: int

    def setup(self):
        self.embed = nn.Embed(self.vocab_size, self.d_model)  # embedding (V, D)
        # a list assigned in setup names its items encoder_0, encoder_1, ...
        self.encoder = [
            EncoderBlock(self.d_model, self.num_heads, self.d_ff)
            for _ in range(self.num_enc_layers)
        ]
        self.encoder_norm = RMSNorm(self.d_model)
        self.decoder = [
            DecoderBlock(self.d_model, self.num_heads, self.d_ff)
            for _ in range(self.num_dec_layers)
        ]
        self.decoder_norm = RMSNorm(self.d_model)

    def __call__(self, enc_ids, dec_ids):
        """Encodes `enc_ids`, decodes `dec_ids` against it, returns next-token logits.

        Args:
            enc_ids: (T_enc,) int32 encoder token ids.
            dec_ids: (T_dec,) int32 decoder token ids.

        Returns:
            (T_dec, V) float32 logits.
        """
        enc = self.embed(enc_ids)  # (T_enc, D)
        for layer in self.encoder:
            enc = layer(enc)
        enc = self.encoder_norm(enc)
        dec = self.embed(dec_ids)  # (T_dec, D)
        for layer in self.decoder:
            dec = layer(dec, enc)
        dec = self.decoder_norm(dec)
        return jnp.einsum("td,vd->tv", dec, self.embed.embedding)


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """Initialises a MiniT5 from `seed` and returns its logits for one input pair.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x_enc_ids: (T_enc,) int32 token ids in [0, vocab_size).
        x_dec_ids: (T_dec,) int32 token ids in [0, vocab_size).
        vocab_size: int, V.
        d_model: int, D, divisible by num_heads.
        num_heads: int, H.
        d_ff: int, feed-forward hidden width.
        num_enc_layers: int, encoder blocks.
        num_dec_layers: int, decoder blocks.

    Returns:
        (T_dec * V,) float32: the (T_dec, V) logits flattened row by row.
    """
    model = MiniT5(
        vocab_size=int(vocab_size),
        d_model=int(d_model),
        num_heads=int(num_heads),
        d_ff=int(d_ff),
        num_enc_layers=int(num_enc_layers),
        num_dec_layers=int(num_dec_layers),
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
