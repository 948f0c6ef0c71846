"""Output head is its own Dense layer instead of the tied embedding.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import flax.linen as nn

from grader.problems import load_module

MESSAGE = (
    "Your logits come from a separate output projection. In this model the head is tied "
    "to the input embedding: the logits are the final decoder states times the transpose "
    "of `embed`'s (V, D) table, with no extra layer and no extra parameters. Check your "
    "parameter tree against the one in the statement: it has no head of its own."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")
DecoderBlock = reference.DecoderBlock
EncoderBlock = reference.EncoderBlock
RMSNorm = reference.RMSNorm


class MiniT5(reference.MiniT5):
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
        self.lm_head = nn.Dense(self.vocab_size, use_bias=False)  # MISTAKE: the head is tied

    def __call__(self, enc_ids, dec_ids):
        """Encodes `enc_ids`, decodes `dec_ids` against it, returns next-token logits.

        Args:
            enc_ids: (T_enc,) int32 encoder token ids.
            dec_ids: (T_dec,) int32 decoder token ids.

        Returns:
            (T_dec, V) float32 logits.
        """
        x = self.embed(enc_ids)  # (T_enc, D)
        for block in self.encoder:
            x = block(x)
        memory = self.encoder_norm(x)  # (T_enc, D)

        y = self.embed(dec_ids)  # (T_dec, D), same table as the encoder
        for block in self.decoder:
            y = block(y, memory)
        y = self.decoder_norm(y)  # (T_dec, D)
        return self.lm_head(y)  # (T_dec, V)


reference.MiniT5 = MiniT5


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
