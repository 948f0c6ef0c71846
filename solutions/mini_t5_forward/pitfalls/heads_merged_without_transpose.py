"""Heads split right, but merged back by reshaping (H, T, head_dim) straight to (T, D).

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import jax
import jax.numpy as jnp

from grader.problems import load_module

MESSAGE = (
    "You split the heads right but merged them back with a single reshape from (H, T_q, "
    "head_dim) to (T_q, D), without moving the head axis back first. That puts numbers of "
    "different positions side by side in one row. Undo the split in reverse order: move the "
    "head axis back to the middle, (T_q, H, head_dim), then reshape to (T_q, D). With one "
    "head it makes no difference, which is why some cases pass."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")
MASK_VALUE = reference.MASK_VALUE


class MultiHeadAttention(reference.MultiHeadAttention):
    def __call__(self, x, context, mask=None):
        """Lets each row of `x` attend over the rows of `context`.

        Self-attention passes the same array as `x` and `context`; cross-attention
        passes the decoder stream as `x` and the encoder output as `context`.

        Args:
            x: (T_q, D) float32, where the queries come from.
            context: (T_k, D) float32, where the keys and values come from.
            mask: optional (T_q, T_k) bool, True where query i may see key j.
                None means every query sees every key.

        Returns:
            (T_q, D) float32.
        """
        T_q, T_k = x.shape[0], context.shape[0]
        H = self.num_heads
        hd = self.d_model // H
        q = self.query(x).reshape(T_q, H, hd).transpose(1, 0, 2)  # (H, T_q, hd)
        k = self.key(context).reshape(T_k, H, hd).transpose(1, 0, 2)  # (H, T_k, hd)
        v = self.value(context).reshape(T_k, H, hd).transpose(1, 0, 2)  # (H, T_k, hd)
        scores = q @ k.transpose(0, 2, 1) / jnp.sqrt(jnp.float32(hd))  # (H, T_q, T_k)
        if mask is not None:
            scores = jnp.where(mask[None, :, :], scores, MASK_VALUE)
        weights = jax.nn.softmax(scores, axis=-1)  # each query's weights sum to 1
        heads = weights @ v  # (H, T_q, hd)
        merged = heads.reshape(T_q, self.d_model)  # MISTAKE: the head axis was not moved back
        return self.out(merged)


reference.MultiHeadAttention = MultiHeadAttention


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
