"""Cross-attention masked with a lower-triangular mask.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import jax.numpy as jnp

from grader.problems import load_module

MESSAGE = (
    "Your cross-attention is masked. Every decoder position may look at every encoder "
    "position; a causal mask only makes sense when queries and keys are the same decoder "
    "positions. You can see it in the first row of logits: with your code it depends only "
    "on the first encoder id. Pass no mask to the cross-attention."
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
        causal = jnp.tril(jnp.ones((T_dec, T_dec), dtype=bool))  # (T_dec, T_dec), i sees j <= i
        h = self.self_attn_norm(x)
        x = x + self.self_attn(h, h, causal)
        # queries from the decoder stream; keys and values from the encoder's memory
        T_enc = memory.shape[0]
        tri = jnp.tril(jnp.ones((T_dec, T_enc), dtype=bool))  # MISTAKE: cross-attention is unmasked
        x = x + self.cross_attn(self.cross_attn_norm(x), memory, tri)
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
