"""Absolute sinusoidal position encoding (Vaswani et al., 2017, section 3.5)."""

import math

import jax.numpy as jnp


def sinusoidal_pe(seed, T, d_model, offset):
    """The sinusoidal position encoding of positions offset .. offset + T - 1.

    With p = offset + t and w_k = 10000 ** (-2k / d_model), k = 0 .. d_model/2 - 1:
    PE[t, 2k] = sin(p * w_k) and PE[t, 2k + 1] = cos(p * w_k).

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        T: int >= 1, number of positions.
        d_model: int, even, >= 2.
        offset: int >= 0, the first position (a decoding step at position offset).

    Returns:
        (T * d_model,) float32: the (T, d_model) table flattened row by row.
    """
    freqs = jnp.exp(jnp.arange(0, d_model, 2, dtype=jnp.float32) * (-math.log(10000.0) / d_model))
    pos = jnp.arange(offset, offset + T, dtype=jnp.float32)
    angles = jnp.outer(pos, freqs)  # (T, d_model // 2)
    # first half sines, second half cosines
    pe = jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=1)
    return pe.reshape(-1).astype(jnp.float32)
