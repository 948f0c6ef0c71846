"""LayerNorm (mean subtracted) instead of RMSNorm.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import jax
import jax.numpy as jnp

from grader.problems import load_module

MESSAGE = (
    "Your norm subtracts the mean of each row, which makes it a LayerNorm. RMSNorm does "
    "not centre: it divides each row by the square root of (the mean of its squares + "
    "eps) over the last axis, then multiplies by gamma. No mean, no variance, no bias."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")


class RMSNorm(reference.RMSNorm):
    def __call__(self, x):
        """Normalises each row of `x` by its root mean square, then scales by `gamma`.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32: gamma * x / sqrt(mean(x**2, last axis) + eps).
        """
        x = x - jnp.mean(x, axis=-1, keepdims=True)  # MISTAKE: RMSNorm does not centre
        mean_square = jnp.mean(x * x, axis=-1, keepdims=True)  # (T, 1)
        return self.gamma * x * jax.lax.rsqrt(mean_square + self.eps)


reference.RMSNorm = RMSNorm


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
