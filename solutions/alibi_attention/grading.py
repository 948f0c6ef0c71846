"""Comparison hook for alibi_attention: the forms of ALiBi's bias that the layer treats alike.

Inside the layer's causal softmax, adding a constant to a row of scores changes nothing, and a cell the
mask hides never counts. So the helper `alibi_bias` may return any matrix that, in each row, differs from
the reference's m_h (j - i) by a constant on the cells the mask keeps (j <= i): BLOOM's and the ALiBi
repository's m_h j rows, MPT's m_h (j - (T - 1)), -m_h |i - j|, or the lower triangle alone. The layer's
output is graded as it is, so every one of them passes; `canonical_part` makes the helper's own output
compare the same way when a failure is located part by part, so that a form the layer accepts is never
pointed at as the first wrong part (and `grade alibi_attention --part alibi_bias` accepts it too).
"""

import numpy as np


def canonical_part(name: str, output: np.ndarray) -> np.ndarray:
    """``output`` of the part ``name`` in one form: for ``alibi_bias`` ((H, T, T)), each row measured from
    its diagonal cell, and the cells the causal mask hides (j > i) set to 0; any other part as it is."""
    if name != "alibi_bias" or np.ndim(output) != 3 or output.shape[-1] != output.shape[-2]:
        return output
    output = np.asarray(output, dtype=np.float64)
    kept = np.tril(np.ones(output.shape[-2:], dtype=bool))  # (T, T): key j <= query i
    diagonal = np.diagonal(output, axis1=-2, axis2=-1)[..., :, None]  # (H, T, 1): the query's own key
    return np.where(kept, output - diagonal, 0.0)
