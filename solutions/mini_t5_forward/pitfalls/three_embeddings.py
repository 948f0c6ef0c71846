"""Separate embedding tables for encoder input, decoder input and output head.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import flax.linen as nn

from grader.problems import load_module

MESSAGE = (
    "You use three different tables: one for the encoder ids, one for the decoder ids and "
    "one for the output head. This model ties them: the single `embed` module (V, D) "
    "embeds both id sequences, and the same table, transposed, turns the final decoder "
    "states into logits. Remove the extra tables and use `self.embed` (and its "
    "`embedding` attribute) everywhere."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")
DecoderBlock = reference.DecoderBlock
EncoderBlock = reference.EncoderBlock
RMSNorm = reference.RMSNorm


class MiniT5(reference.MiniT5):
    def setup(self):
        # MISTAKE: three tables instead of one shared `embed`
        self.encoder_embed = nn.Embed(self.vocab_size, self.d_model)
        self.decoder_embed = nn.Embed(self.vocab_size, self.d_model)
        self.head_embed = nn.Embed(self.vocab_size, self.d_model)
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
        x = self.encoder_embed(enc_ids)  # (T_enc, D)
        for block in self.encoder:
            x = block(x)
        memory = self.encoder_norm(x)  # (T_enc, D)

        y = self.decoder_embed(dec_ids)  # (T_dec, D)
        for block in self.decoder:
            y = block(y, memory)
        y = self.decoder_norm(y)  # (T_dec, D)
        return y @ self.head_embed.embedding.T  # (T_dec, V)


reference.MiniT5 = MiniT5


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
