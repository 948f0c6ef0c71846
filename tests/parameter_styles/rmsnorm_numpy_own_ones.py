"""rmsnorm in NumPy beside a module that declares gamma, but the arithmetic uses an array of ones of its own."""

import jax
import numpy as np
from flax import linen as nn


class RMSNorm(nn.Module):
    """Declares the statement's parameter tree, one gain "gamma" of shape (D,), and returns it."""

    @nn.compact
    def __call__(self, x):
        return self.param("gamma", nn.initializers.ones, (x.shape[-1],))  # (D,)


def rmsnorm(seed: int, x: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm over the last axis, gamma from `init` with PRNGKey(seed).

    Args:
        seed: seed for `init`.
        x: (..., D) float32, rank 1 to 3.
        eps: the epsilon of RMSNorm, a positive float.

    Returns:
        (N,) float32, the normalised `x` flattened, where N = x.size.
    """
    x = np.asarray(x, dtype=np.float64)  # (..., D)
    params = RMSNorm().init(jax.random.PRNGKey(seed), x.astype(np.float32))["params"]
    gamma = np.ones(x.shape[-1])  # (D,): not the parameter
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)  # (..., 1)
    return (gamma * x / rms).astype(np.float32).reshape(-1)  # (N,)
