"""Correct: each query's T keys are one contiguous window of its row; jax.vmap over the rows."""

import jax
import jax.numpy as jnp


def rel_shift(seed, x):
    """out[i, j] = x[i, j - i + T - 1], flattened to (T * T,) float32."""
    x = jnp.asarray(x, jnp.float32)  # (T, 2T - 1)
    T = x.shape[0]

    def window(row, i):
        # Key 0 is at offset -i, which sits in column T - 1 - i; keys 1 .. T - 1 follow it.
        return jax.lax.dynamic_slice(row, (T - 1 - i,), (T,))  # (T,)

    out = jax.vmap(window)(x, jnp.arange(T))  # (T, T)
    return out.reshape(-1)  # (T * T,)
