"""Post-norm residuals: x = norm(x + sublayer(x)).

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import jax.numpy as jnp

from grader.problems import load_module

MESSAGE = (
    "You normalise after each residual addition (post-norm, as in the 2017 Transformer). "
    "This model is pre-norm: each sublayer reads norm(x) and its output is added to the "
    "unnormalised stream, x = x + sublayer(norm(x)). The stream itself is normalised only "
    "once per stack, by the final encoder_norm and decoder_norm."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")


class EncoderBlock(reference.EncoderBlock):
    def __call__(self, x):
        """Runs one encoder block; each sublayer is x + sublayer(norm(x)).

        Args:
            x: (T_enc, D) float32, the encoder stream.

        Returns:
            (T_enc, D) float32.
        """
        # MISTAKE: post-norm
        x = self.self_attn_norm(x + self.self_attn(x, x))
        x = self.ffn_norm(x + self.ffn(x))
        return x


reference.EncoderBlock = EncoderBlock


class DecoderBlock(reference.DecoderBlock):
    def __call__(self, x, memory):
        """Runs one decoder block; each sublayer is x + sublayer(norm(x)).

        Args:
            x: (T_dec, D) float32, the decoder stream.
            memory: (T_enc, D) float32, the encoder's final (normalised) output.

        Returns:
            (T_dec, D) float32.
        """
        T_dec = x.shape[0]
        causal = jnp.tril(jnp.ones((T_dec, T_dec), dtype=bool))  # (T_dec, T_dec), i sees j <= i
        # MISTAKE: post-norm
        x = self.self_attn_norm(x + self.self_attn(x, x, causal))
        x = self.cross_attn_norm(x + self.cross_attn(x, memory))
        x = self.ffn_norm(x + self.ffn(x))
        return x


reference.DecoderBlock = DecoderBlock


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
