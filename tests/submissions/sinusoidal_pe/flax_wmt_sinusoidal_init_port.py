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
    # ported from sinusoidal_init in flax/examples/wmt/models.py
    max_len = offset + T
    min_scale, max_scale = 1.0, 10000.0
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    position = np.arange(0, max_len)[:, np.newaxis]
    scale_factor = -np.log(max_scale / min_scale) / (d_model // 2 - 1)
    div_term = min_scale * np.exp(np.arange(0, d_model // 2) * scale_factor)
    pe[:, : d_model // 2] = np.sin(position * div_term)
    pe[:, d_model // 2 : 2 * (d_model // 2)] = np.cos(position * div_term)
    return pe[offset:].reshape(-1)
