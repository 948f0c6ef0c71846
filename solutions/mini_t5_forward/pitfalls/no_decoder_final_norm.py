"""Logits computed without the final decoder RMSNorm.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

from grader.problems import load_module

MESSAGE = (
    "Your logits come from the decoder stream as it leaves the last decoder block. "
    "Pre-norm stacks end with a norm: apply decoder_norm to the last decoder block's "
    "output, then the tied head. You can see it in the size of your logits: the "
    "unnormalised stream tends to grow block after block, so your logits tend to come out "
    "larger than expected."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")


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
        for block in self.encoder:
            x = block(x)
        memory = self.encoder_norm(x)  # (T_enc, D)

        y = self.embed(dec_ids)  # (T_dec, D), same table as the encoder
        for block in self.decoder:
            y = block(y, memory)
        # MISTAKE: decoder_norm skipped
        return y @ self.embed.embedding.T  # (T_dec, V), the tied output head


reference.MiniT5 = MiniT5


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
