"""Decoder self-attention without the causal mask.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

from grader.problems import load_module

MESSAGE = (
    "Your decoder's self-attention lets each position see the positions after it. The "
    "decoder must be causal: position i attends only to positions 0..i. You can see it by "
    "changing the last decoder id: in your output the earlier rows change too, in the "
    "reference they do not. Give the decoder's self-attention a lower-triangular (T_dec, "
    "T_dec) mask; the encoder and the cross-attention stay unmasked."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")


class DecoderBlock(reference.DecoderBlock):
    def __call__(self, x, memory):
        """Runs one decoder block; each sublayer is x + sublayer(norm(x)).

        Args:
            x: (T_dec, D) float32, the decoder stream.
            memory: (T_enc, D) float32, the encoder's final (normalised) output.

        Returns:
            (T_dec, D) float32.
        """
        h = self.self_attn_norm(x)
        x = x + self.self_attn(h, h)  # MISTAKE: no causal mask
        # queries from the decoder stream; keys and values from the encoder's memory
        x = x + self.cross_attn(self.cross_attn_norm(x), memory)
        x = x + self.ffn(self.ffn_norm(x))
        return x


reference.DecoderBlock = DecoderBlock


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
