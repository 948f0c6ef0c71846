"""Correct: pure NumPy in float64, cast to float32 at the end (runs eagerly only, no jit).

The parameter comes from a module that only declares it: the grader moves what `init` returns, so the
arithmetic must use that gamma, not an array of ones of its own.
"""

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
    gamma = np.asarray(params["gamma"], dtype=np.float64)  # (D,)
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)  # (..., 1)
    return (gamma * x / rms).astype(np.float32).reshape(-1)  # (N,)
