"""Absolute sinusoidal position encoding (Vaswani et al., 2017, section 3.5)."""

import jax.numpy as jnp
import numpy as np


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
    del seed  # unused: the encoding has no parameters
    half = d_model // 2  # sine-cosine pairs per row
    # d_model is a Python int, so the d_model / 2 frequencies are known before any array exists: they are
    # worked out once on the host in float64 and rounded to float32 once (the angles below are float32).
    k = np.arange(half, dtype=np.float64)  # (d/2,) pair index
    inv_freq = np.power(10000.0, -2.0 * k / d_model)  # (d/2,) w_k, radians per position
    positions = offset + jnp.arange(T, dtype=jnp.float32)  # (T,): p = offset .. offset + T - 1
    angles = positions[:, None] * jnp.asarray(inv_freq, jnp.float32)[None, :]  # (T, d/2): p * w_k
    pairs = jnp.stack([jnp.sin(angles), jnp.cos(angles)], axis=-1)  # (T, d/2, 2): sine first in each pair
    return pairs.reshape(-1)  # (T * d_model,): each row reads sin, cos, sin, cos, ...
