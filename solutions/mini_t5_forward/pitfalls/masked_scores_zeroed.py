"""Masked attention scores set to 0 instead of a large negative value.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import jax
import jax.numpy as jnp

from grader.problems import load_module

MESSAGE = (
    "You hide the future by setting its scores to 0 (for example by multiplying the "
    "scores by the mask). A score of 0 is not hidden: softmax still gives it weight "
    "exp(0) relative to the others, so later decoder positions still leak into earlier "
    "ones. Replace the masked scores with a large negative number (MASK_VALUE) before the "
    "softmax, so that their weights come out as 0."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")


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
            scores = scores * mask[None, :, :]  # MISTAKE: a 0 score still gets weight
        weights = jax.nn.softmax(scores, axis=-1)  # each query's weights sum to 1
        heads = weights @ v  # (H, T_q, hd)
        merged = heads.transpose(1, 0, 2).reshape(T_q, self.d_model)  # (T_q, D)
        return self.out(merged)


reference.MultiHeadAttention = MultiHeadAttention


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
