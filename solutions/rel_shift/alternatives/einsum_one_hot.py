"""Correct: a (T, T, 2T - 1) one-hot selector picks each cell's column, applied with einsum.

Multiplying by exact ones and zeros and summing is exact in float32 as long as the product runs at
full precision, hence precision=HIGHEST (a GPU or TPU would otherwise use a reduced-precision matmul).
"""

import jax
import jax.numpy as jnp


def rel_shift(seed, x):
    """out[i, j] = x[i, j - i + T - 1], flattened to (T * T,) float32."""
    x = jnp.asarray(x, jnp.float32)  # (T, 2T - 1)
    T = x.shape[0]
    pos = jnp.arange(T)
    column = pos[None, :] - pos[:, None] + T - 1  # (T, T): the column of x that holds offset j - i
    select = jax.nn.one_hot(column, 2 * T - 1, dtype=jnp.float32)  # (T, T, 2T - 1)
    out = jnp.einsum("ic,ijc->ij", x, select, precision=jax.lax.Precision.HIGHEST)  # (T, T)
    return out.reshape(-1)  # (T * T,)
