"""Embeddings multiplied by sqrt(d_model).

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import jax.numpy as jnp

from grader.problems import load_module

MESSAGE = (
    "You multiply the embedded ids by sqrt(d_model). Some Transformers do that (the "
    "original one, to balance sinusoidal positions); this one does not. The looked-up "
    "embedding rows enter the first block unscaled, for the encoder and for the decoder."
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
        x = self.embed(enc_ids) * jnp.sqrt(jnp.float32(self.d_model))  # MISTAKE: no scaling
        for block in self.encoder:
            x = block(x)
        memory = self.encoder_norm(x)  # (T_enc, D)

        y = self.embed(dec_ids) * jnp.sqrt(jnp.float32(self.d_model))  # MISTAKE: no scaling
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
