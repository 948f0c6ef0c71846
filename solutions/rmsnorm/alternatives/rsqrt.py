"""Correct: linen module using the reciprocal square root, x * rsqrt(mean(x^2) + eps)."""

import jax
import jax.numpy as jnp
from flax import linen as nn


class RMSNorm(nn.Module):
    """RMSNorm over the last axis in the reciprocal form used by T5 implementations.

    Attributes:
        eps: added to the mean square before the reciprocal square root.
    """

    eps: float = 1e-6

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        """Normalises `x` over its last axis.

        Args:
            x: (..., D) float32.

        Returns:
            (..., D) float32, the same shape as `x`.
        """
        gamma = self.param("gamma", nn.initializers.ones, (x.shape[-1],))  # (D,)
        mean_square = jnp.mean(x * x, axis=-1, keepdims=True)  # (..., 1)
        return x * jax.lax.rsqrt(mean_square + self.eps) * gamma  # (..., D)


def rmsnorm(seed: int, x: jax.Array, eps: float) -> jax.Array:
    """Initialises an `RMSNorm` with PRNGKey(seed) and applies it to `x`.

    Args:
        seed: seed for `init`.
        x: (..., D) float32, rank 1 to 3.
        eps: the epsilon of RMSNorm, a positive float.

    Returns:
        (N,) float32, the normalised `x` flattened, where N = x.size.
    """
    x = jnp.asarray(x, jnp.float32)  # (..., D)
    model = RMSNorm(eps=eps)
    params = model.init(jax.random.PRNGKey(seed), x)
    return model.apply(params, x).astype(jnp.float32).reshape(-1)  # (N,)
