"""Absolute sinusoidal position encoding (Vaswani et al., 2017, section 3.5)."""

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
    half = d_model // 2
    # log-spaced timescales from 1 to 10000 over the pairs
    log_step = jnp.log(10000.0) / (half - 1)
    inv_timescales = jnp.exp(-log_step * jnp.arange(half, dtype=jnp.float32))
    pos = offset + jnp.arange(T, dtype=jnp.float32)
    scaled = pos[:, None] * inv_timescales[None, :]
    out = jnp.zeros((T, d_model), jnp.float32)
    out = out.at[:, 0::2].set(jnp.sin(scaled))
    out = out.at[:, 1::2].set(jnp.cos(scaled))
    return out.reshape(-1)
