"""LayerNorm (mean subtracted) instead of RMSNorm.

Known-wrong variant: a private copy of the reference with the class below in place of its own; the
MISTAKE comment marks the difference.
"""

import jax
import jax.numpy as jnp

from grader.variant import override, reference_of

MESSAGE = (
    "Your norm subtracts the mean of each row, which makes it a LayerNorm. RMSNorm does "
    "not centre: it divides each row by the square root of (the mean of its squares + "
    "eps) over the last axis, then multiplies by gamma. No mean, no variance, no bias."
)


reference = reference_of(__file__)


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


mini_t5_forward = override(reference, RMSNorm)
