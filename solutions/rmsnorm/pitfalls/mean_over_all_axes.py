"""Averages the squares over the whole array instead of over the last axis.

Known-wrong variant of the reference in ../rmsnorm.py; only `RMSNorm.__call__` differs.
"""

import jax
import jax.numpy as jnp
from flax import linen as nn

MESSAGE = (
    "The mean of the squares is taken over every entry of x at once, so all rows share one scale: "
    "a row's result depends on the other rows, and the rows of your output do not each have unit "
    "RMS. It is right for 1-D inputs and wrong as soon as there are several rows. Reduce over the "
    "last axis only and keep that axis so the result lines up with x."
)


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
        mean_square = jnp.mean(jnp.square(x))  # ()
        return gamma * (x / jnp.sqrt(mean_square + self.eps))  # (..., D)


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
