"""Encoder self-attention with a causal mask.

Known-wrong variant: a private copy of the reference with the class below in place of its own; the
MISTAKE comment marks the difference.
"""

import jax.numpy as jnp

from grader.variant import override, reference_of

MESSAGE = (
    "Your encoder's self-attention is causal. The encoder reads the whole input at once: "
    "every encoder position attends to every encoder position, earlier and later. You can "
    "see it by changing the last encoder id: with your code only part of the encoder "
    "reacts. Keep the causal mask for the decoder's self-attention only."
)


reference = reference_of(__file__)


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


mini_t5_forward = override(reference, EncoderBlock)
