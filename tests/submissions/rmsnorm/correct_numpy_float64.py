"""RMSNorm, the normalisation layer of T5, as a Flax linen module."""

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn


def _normalise_f64(x, eps):
    """x / sqrt(mean(x**2, last axis) + eps), computed in numpy float64, returned as float32."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    mean_square = np.einsum("...d,...d->...", x, x) / d  # (...,)
    return (x / np.sqrt(mean_square + float(eps))[..., None]).astype(np.float32)


class RMSNorm(nn.Module):
    """Scales each vector along the last axis to unit root mean square, then by a learned gain.

    Attributes:
        eps: added to the mean square before the square root; keeps all-zero rows finite.
    """

    eps: float = 1e-6

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        """Normalises `x` over its last axis (the arithmetic runs in float64 on the host)."""
        # Fixed by the problem: one parameter named "gamma", shape (D,), initialised to ones.
        gamma = self.param("gamma", nn.initializers.ones, (x.shape[-1],))  # (D,)
        normed = jax.pure_callback(
            _normalise_f64,
            jax.ShapeDtypeStruct(x.shape, jnp.float32),
            x,
            jnp.asarray(self.eps, jnp.float32),  # eps may be traced under jit
        )
        return gamma * normed


def rmsnorm(seed: int, x: jax.Array, eps: float) -> jax.Array:
    """Initialises an `RMSNorm` with PRNGKey(seed) and applies it to `x`."""
    x = jnp.asarray(x, jnp.float32)  # (..., D)
    model = RMSNorm(eps=eps)
    params = model.init(jax.random.PRNGKey(seed), x)
    y = model.apply(params, x)  # (..., D)
    return y.astype(jnp.float32).reshape(-1)  # (N,)
