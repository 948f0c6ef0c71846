"""RMSNorm, the normalisation layer of T5, as a Flax linen module."""

import jax
import jax.numpy as jnp
from flax import linen as nn


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
        ms = jnp.mean(x**2, axis=-1, keepdims=True)
        return x * jnp.reciprocal(ms + self.eps) * gamma


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
