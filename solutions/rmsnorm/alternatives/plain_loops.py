"""Correct: linen module that walks the rows in Python loops, adding up squares one at a time."""

import jax
import jax.numpy as jnp
from flax import linen as nn


class RMSNorm(nn.Module):
    """RMSNorm over the last axis, one row at a time.

    Attributes:
        eps: added to the mean square before the square root.
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
        d = x.shape[-1]
        gamma = self.param("gamma", nn.initializers.ones, (d,))  # (D,)
        rows = x.reshape(-1, d)  # (R, D)
        out = []
        for r in range(rows.shape[0]):
            total = 0.0
            for j in range(d):
                total = total + rows[r, j] * rows[r, j]
            rms = jnp.sqrt(total / d + self.eps)
            out.append(gamma * rows[r] / rms)  # (D,)
        return jnp.stack(out).reshape(x.shape)  # (..., D)


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
