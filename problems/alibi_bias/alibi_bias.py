"""ALiBi's attention bias (Press et al., 2022): a penalty linear in the distance from query to key.

Three bodies to write, each marked TODO: the slopes, the grid of key-minus-query positions and the bias
that combines them. The two helpers are graded alone as well (`grade alibi_bias --part alibi_slopes`), and
a failure points at the first of them that is wrong; alibi_bias may use them or do without (a helper left
raising NotImplementedError is passed over).
"""

import math  # noqa: F401

import jax.numpy as jnp  # noqa: F401
import numpy as np  # noqa: F401


def alibi_slopes(num_heads):
    """The slope m_h of every head (the ofirpress get_slopes rule, in closed form).

    With c = 2 ** floor(log2(num_heads)), the largest power of two not above num_heads:
    m_h = 2 ** (-8 (h + 1) / c) for h < c, then m_(c + j) = 2 ** (-4 (2j + 1) / c) for
    j < num_heads - c (every other slope of the 2c-head sequence, starting with its first).

    Args:
        num_heads: int >= 1, the number of heads H.

    Returns:
        (H,) float32, the slopes in head order.
    """
    # TODO: find c, the largest power of two not above num_heads; give the first c heads the
    # geometric slopes of the README and the heads past c every other slope of the 2c-head
    # sequence, in that order; return the H slopes as a float32 array.
    raise NotImplementedError


def relative_positions(T):
    """Key position minus query position, for every (query, key) pair of a length-T sequence.

    Args:
        T: int >= 1, the sequence length (queries and keys alike).

    Returns:
        (T, T) int32: [i, j] = j - i (row i = query, column j = key); 0 on the diagonal,
        negative below it (keys before the query), positive above it.
    """
    # TODO: return the (T, T) grid whose cell (i, j) is the key's position minus the query's.
    raise NotImplementedError


def alibi_bias(seed, T, num_heads):
    """ALiBi's bias for a length-T self-attention: bias[h, i, j] = m_h * (j - i).

    Slopes: c = 2 ** floor(log2(num_heads)); m_h = 2 ** (-8 (h + 1) / c) for h < c, and
    m_(c + j) = 2 ** (-4 (2j + 1) / c) for j < num_heads - c (ofirpress get_slopes).
    Zero on the diagonal, negative for keys before the query, positive after it, on the
    whole grid: the causal mask is not part of it.

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        T: int >= 1, the sequence length (queries and keys alike).
        num_heads: int >= 1, the number of heads H.

    Returns:
        (num_heads * T * T,) float32: the (H, T, T) bias flattened head by head, each head
        row by row (row i = query, column j = key).
    """
    # TODO: scale head h's (T, T) grid of key-minus-query positions by its slope m_h, for
    # every head; return the (H, T, T) bias as float32, flattened (head, then row, then column).
    raise NotImplementedError
