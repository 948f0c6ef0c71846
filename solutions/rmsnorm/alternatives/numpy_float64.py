"""Correct: pure NumPy in float64, cast to float32 at the end (runs eagerly only, no jit)."""

import numpy as np


def rmsnorm(seed: int, x: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm over the last axis with gamma = ones; `seed` is unused since gamma starts at ones.

    Args:
        seed: unused.
        x: (..., D) float32, rank 1 to 3.
        eps: the epsilon of RMSNorm, a positive float.

    Returns:
        (N,) float32, the normalised `x` flattened, where N = x.size.
    """
    x = np.asarray(x, dtype=np.float64)  # (..., D)
    gamma = np.ones(x.shape[-1])  # (D,)
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)  # (..., 1)
    return (gamma * x / rms).astype(np.float32).reshape(-1)  # (N,)
