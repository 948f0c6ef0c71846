"""Encoder output used as memory without the final encoder RMSNorm.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

from grader.problems import load_module

MESSAGE = (
    "Your decoder cross-attends to the encoder stream as it leaves the last encoder "
    "block. Pre-norm stacks end with a norm: apply encoder_norm to the last encoder "
    "block's output and give that to every decoder block as its memory."
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
        memory = x  # MISTAKE: encoder_norm skipped

        y = self.embed(dec_ids)  # (T_dec, D), same table as the encoder
        for block in self.decoder:
            y = block(y, memory)
        y = self.decoder_norm(y)  # (T_dec, D)
        return y @ self.embed.embedding.T  # (T_dec, V), the tied output head


reference.MiniT5 = MiniT5


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
