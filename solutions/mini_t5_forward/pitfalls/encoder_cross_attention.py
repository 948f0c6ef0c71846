"""Encoder blocks with a cross-attention sublayer.

Known-wrong variant: a private copy of the reference with the class below in place of its own; the
MISTAKE comment marks the difference.
"""

from grader.variant import override, reference_of

MESSAGE = (
    "Your encoder blocks cross-attend to something. Only decoder blocks have "
    "cross-attention, and it is the decoder that attends to the encoder. An encoder block "
    "is exactly two sublayers: self-attention over the encoder positions, then the "
    "feed-forward network, each as x + sublayer(norm(x))."
)


reference = reference_of(__file__)
FeedForward = reference.FeedForward
MultiHeadAttention = reference.MultiHeadAttention
RMSNorm = reference.RMSNorm


class EncoderBlock(reference.EncoderBlock):
    def setup(self):
        self.self_attn_norm = RMSNorm(self.d_model)
        self.self_attn = MultiHeadAttention(self.d_model, self.num_heads)
        self.cross_attn_norm = RMSNorm(self.d_model)  # MISTAKE: encoders have no cross-attention
        self.cross_attn = MultiHeadAttention(self.d_model, self.num_heads)
        self.ffn_norm = RMSNorm(self.d_model)
        self.ffn = FeedForward(self.d_model, self.d_ff)

    def __call__(self, x, context):
        """Runs one encoder block; each sublayer is x + sublayer(norm(x)).

        Args:
            x: (T_enc, D) float32, the encoder stream.

        Returns:
            (T_enc, D) float32.
        """
        h = self.self_attn_norm(x)
        x = x + self.self_attn(h, h)  # no mask: every position sees every position
        x = x + self.cross_attn(self.cross_attn_norm(x), context)  # MISTAKE
        x = x + self.ffn(self.ffn_norm(x))
        return x


class MiniT5(reference.MiniT5):
    def __call__(self, enc_ids, dec_ids):
        """Encodes `enc_ids`, decodes `dec_ids` against it, returns next-token logits.

        Args:
            enc_ids: (T_enc,) int32 encoder token ids.
            dec_ids: (T_dec,) int32 decoder token ids.

        Returns:
            (T_dec, V) float32 logits.
        """
        x = self.embed(enc_ids)  # (T_enc, D)
        embedded = x
        for block in self.encoder:
            x = block(x, embedded)  # MISTAKE: the encoder only self-attends
        memory = self.encoder_norm(x)  # (T_enc, D)

        y = self.embed(dec_ids)  # (T_dec, D), same table as the encoder
        for block in self.decoder:
            y = block(y, memory)
        y = self.decoder_norm(y)  # (T_dec, D)
        return y @ self.embed.embedding.T  # (T_dec, V), the tied output head


mini_t5_forward = override(reference, EncoderBlock, MiniT5)
