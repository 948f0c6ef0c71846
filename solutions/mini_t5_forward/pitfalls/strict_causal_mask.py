"""Decoder self-attention with a strict causal mask: position i sees only j < i.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import jax.numpy as jnp

from grader.problems import load_module

MESSAGE = (
    "Your decoder's causal mask hides the diagonal: position i sees only the positions before "
    "it, not itself, so position 0 sees nothing at all (its scores are all masked, and the "
    "softmax spreads its weight evenly over keys it must not see). A position may attend to "
    "itself: the mask is True where j <= i, jnp.tril(jnp.ones((T, T), dtype=bool)), "
    "diagonal included."
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
        T_dec = x.shape[0]
        causal = jnp.tril(jnp.ones((T_dec, T_dec), dtype=bool), k=-1)  # MISTAKE: j < i, no diagonal
        h = self.self_attn_norm(x)
        x = x + self.self_attn(h, h, causal)
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
