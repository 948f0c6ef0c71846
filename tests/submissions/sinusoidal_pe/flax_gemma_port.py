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
    # ported from the positional embedding in flax/examples/gemma
    min_timescale, max_timescale = 1.0, 10_000.0
    num_timescales = d_model // 2
    increment = math.log(max_timescale / min_timescale) / max(num_timescales - 1, 1)
    inv_timescales = min_timescale * jnp.exp(jnp.arange(num_timescales, dtype=jnp.float32) * -increment)
    position = jnp.arange(T, dtype=jnp.float32) + offset
    scaled_time = position[:, jnp.newaxis] * inv_timescales[jnp.newaxis, :]
    signal = jnp.concatenate([jnp.sin(scaled_time), jnp.cos(scaled_time)], axis=-1)
    return signal.reshape(-1)
