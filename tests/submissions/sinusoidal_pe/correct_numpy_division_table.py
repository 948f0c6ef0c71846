"""Absolute sinusoidal position encoding (Vaswani et al., 2017, section 3.5)."""

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
    pos = np.arange(offset + T, dtype=np.float64)[:, None]
    col = np.arange(d_model)
    angles = pos / 10000.0 ** (2 * (col // 2) / d_model)
    table = np.where(col % 2 == 0, np.sin(angles), np.cos(angles))
    return table[offset:].astype(np.float32).flatten()
