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
    dtype = jnp.bfloat16  # the model runs in bfloat16, so build the table in it too
    pos = jnp.arange(offset, offset + T).astype(dtype)
    inv_freq = (10000.0 ** (-jnp.arange(0, d_model, 2) / d_model)).astype(dtype)
    ang = pos[:, None] * inv_freq[None, :]
    pe = jnp.stack([jnp.sin(ang), jnp.cos(ang)], axis=-1).reshape(T, d_model)
    return pe.astype(jnp.float32).reshape(-1)
