"""Encoder self-attention with a causal mask.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import jax.numpy as jnp

from grader.problems import load_module

MESSAGE = (
    "Your encoder's self-attention is causal. The encoder reads the whole input at once: "
    "every encoder position attends to every encoder position, earlier and later. You can "
    "see it by changing the last encoder id: with your code only part of the encoder "
    "reacts. Keep the causal mask for the decoder's self-attention only."
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
        T_enc = x.shape[0]
        causal = jnp.tril(jnp.ones((T_enc, T_enc), dtype=bool))  # MISTAKE: encoder is bidirectional
        h = self.self_attn_norm(x)
        x = x + self.self_attn(h, h, causal)
        x = x + self.ffn(self.ffn_norm(x))
        return x


reference.EncoderBlock = EncoderBlock


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
