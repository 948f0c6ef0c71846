"""Computes in bfloat16 and only casts the result back to float32.

Known-wrong variant of the reference in ../rmsnorm.py; only `RMSNorm.__call__` differs.
"""

import jax
import jax.numpy as jnp
from flax import linen as nn

MESSAGE = (
    "Your values are right to two or three significant digits but no further: the arithmetic ran "
    "in bfloat16 (8 bits of mantissa) or another 16-bit float, and casting to float32 at the end "
    "cannot restore the lost digits. This problem is graded at float32 precision. Keep the input, gamma "
    "and every intermediate in float32."
)
# Reduced precision has many forms (cast the input, compute, cast back; a bfloat16 gamma; ...) whose
# values differ from this one's but share the relation to the expected output: the learner's output is
# also taken for this mistake wherever the relations call it reduced precision.
DIAGNOSIS = "reduced_precision"


class RMSNorm(nn.Module):
    """Scales each vector along the last axis to unit root mean square, then by a learned gain.

    Attributes:
        eps: added to the mean square before the square root; keeps all-zero rows finite.

    Example:
        >>> model = RMSNorm(eps=1e-6)
        >>> params = model.init(jax.random.PRNGKey(0), jnp.ones((2, 3)))
        >>> model.apply(params, jnp.full((2, 3), 4.0)).shape
        (2, 3)
    """

    eps: float = 1e-6

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        """Normalises `x` over its last axis.

        Args:
            x: (..., D) float32, any number of leading axes (possibly none).

        Returns:
            (..., D) float32, the same shape as `x`.
        """
        # Fixed by the problem: one parameter named "gamma", shape (D,), initialised to ones.
        gamma = self.param("gamma", nn.initializers.ones, (x.shape[-1],))  # (D,)
        x_low = x.astype(jnp.bfloat16)  # (..., D)
        eps_low = jnp.asarray(self.eps, jnp.bfloat16)
        mean_square = jnp.mean(jnp.square(x_low), axis=-1, keepdims=True)  # (..., 1)
        return gamma.astype(jnp.bfloat16) * (x_low / jnp.sqrt(mean_square + eps_low))  # (..., D)


def rmsnorm(seed: int, x: jax.Array, eps: float) -> jax.Array:
    """Initialises an `RMSNorm` with PRNGKey(seed) and applies it to `x`.

    This wiring is given and already complete: your task is `RMSNorm.__call__` above.

    Args:
        seed: seed for `init` (gamma starts at ones, so the output does not depend on it).
        x: (..., D) float32, rank 1 to 3.
        eps: the epsilon of RMSNorm, a positive float.

    Returns:
        (N,) float32, the normalised `x` flattened, where N = x.size.
    """
    x = jnp.asarray(x, jnp.float32)  # (..., D)
    model = RMSNorm(eps=eps)
    params = model.init(jax.random.PRNGKey(seed), x)
    y = model.apply(params, x)  # (..., D)
    return y.astype(jnp.float32).reshape(-1)  # (N,)
