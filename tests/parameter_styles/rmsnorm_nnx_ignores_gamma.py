"""rmsnorm as an NNX module whose gamma is an nnx.Param that __call__ never reads."""

import jax
import jax.numpy as jnp
from flax import nnx


class RMSNorm(nnx.Module):
    """RMSNorm over the last axis of `num_features` features.

    Args:
        num_features: D, the size of the last axis.
        eps: added to the mean square before the square root.
        rngs: random streams; unused here, since gamma starts at ones.
    """

    def __init__(self, num_features: int, *, eps: float, rngs: nnx.Rngs):
        self.gamma = nnx.Param(jnp.ones((num_features,), jnp.float32))  # (D,)
        self.eps = eps

    def __call__(self, x: jax.Array) -> jax.Array:
        """Normalises `x`: (..., D) float32 -> (..., D) float32."""
        mean_square = jnp.mean(jnp.square(x), axis=-1, keepdims=True)  # (..., 1)
        return x / jnp.sqrt(mean_square + self.eps)  # (..., D): gamma forgotten


def rmsnorm(seed: int, x: jax.Array, eps: float) -> jax.Array:
    """Builds an NNX `RMSNorm` with Rngs(seed) and applies it to `x`.

    Args:
        seed: seed for the module's random streams.
        x: (..., D) float32, rank 1 to 3.
        eps: the epsilon of RMSNorm, a positive float.

    Returns:
        (N,) float32, the normalised `x` flattened, where N = x.size.
    """
    x = jnp.asarray(x, jnp.float32)  # (..., D)
    model = RMSNorm(x.shape[-1], eps=eps, rngs=nnx.Rngs(seed))
    return model(x).astype(jnp.float32).reshape(-1)  # (N,)
