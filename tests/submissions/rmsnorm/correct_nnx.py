"""RMSNorm, the normalisation layer of T5, written with Flax NNX instead of linen."""

import jax
import jax.numpy as jnp
from flax import nnx


class RMSNorm(nnx.Module):
    """Scales each vector along the last axis to unit root mean square, then by a learned gain."""

    def __init__(self, features: int, eps: float = 1e-6, *, rngs: nnx.Rngs):
        self.eps = eps
        # one parameter, gamma, shape (D,), initialised to ones
        self.gamma = nnx.Param(nnx.initializers.ones(rngs.params(), (features,), jnp.float32))

    def __call__(self, x: jax.Array) -> jax.Array:
        inv_rms = jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + self.eps)
        return x * inv_rms * self.gamma.value


def rmsnorm(seed: int, x: jax.Array, eps: float) -> jax.Array:
    """Builds the NNX RMSNorm from `seed`, applies it to `x` and returns the result flattened."""
    x = jnp.asarray(x, jnp.float32)  # (..., D)
    norm = RMSNorm(x.shape[-1], eps=eps, rngs=nnx.Rngs(params=seed))
    return norm(x).astype(jnp.float32).reshape(-1)  # (N,)
