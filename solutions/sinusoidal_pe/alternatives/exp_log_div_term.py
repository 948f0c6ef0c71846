"""Correct: the exp-log float32 form of the PyTorch tutorial and the Annotated Transformer, in jax.numpy.

The frequencies are exp(2i * (-ln 10000 / d_model)) instead of a power, and the table is filled by
strided writes into its even and odd columns.
"""

import math

import jax.numpy as jnp


def sinusoidal_pe(seed, T, d_model, offset):
    """Sinusoidal position encoding of positions offset .. offset + T - 1, (T * d_model,) float32."""
    slope = -math.log(10000.0) / d_model  # the log of the frequency falls by this per column
    freqs = jnp.exp(jnp.arange(0, d_model, 2, dtype=jnp.float32) * slope)  # (d/2,)
    steps = jnp.arange(offset, offset + T, dtype=jnp.float32)[:, None] * freqs  # (T, d/2)
    table = jnp.zeros((T, d_model), dtype=jnp.float32)
    table = table.at[:, ::2].set(jnp.sin(steps)).at[:, 1::2].set(jnp.cos(steps))
    return table.ravel()  # (T * d_model,)
