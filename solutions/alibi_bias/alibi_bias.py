"""ALiBi's attention bias (Press et al., 2022): a penalty linear in the distance from query to key.

Three bodies to write, each marked TODO: the slopes, the grid of key-minus-query positions and the bias
that combines them. The two helpers are graded alone as well (`grade alibi_bias --part alibi_slopes`), and
a failure points at the first of them that is wrong; alibi_bias may use them or do without (a helper left
raising NotImplementedError is passed over).
"""

import jax.numpy as jnp
import numpy as np


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
    c = 1 << (num_heads.bit_length() - 1)  # the largest power of two <= H, in exact integer arithmetic
    h = np.arange(c, dtype=np.float64)  # (c,)
    base = 2.0 ** (-8.0 * (h + 1.0) / c)  # (c,): geometric, from 2^(-8/c) down to 2^-8
    j = np.arange(num_heads - c, dtype=np.float64)  # (H - c,): the heads past the power of two
    extra = 2.0 ** (-4.0 * (2.0 * j + 1.0) / c)  # (H - c,): slopes 0, 2, 4, ... of the 2c-head sequence
    return jnp.asarray(np.concatenate([base, extra]), dtype=jnp.float32)  # (H,)


def relative_positions(T):
    """Key position minus query position, for every (query, key) pair of a length-T sequence.

    Args:
        T: int >= 1, the sequence length (queries and keys alike).

    Returns:
        (T, T) int32: [i, j] = j - i (row i = query, column j = key); 0 on the diagonal,
        negative below it (keys before the query), positive above it.
    """
    pos = jnp.arange(T, dtype=jnp.int32)  # (T,)
    return pos[None, :] - pos[:, None]  # (T, T): key j minus query i


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
    del seed  # unused: the bias has no parameters
    slopes = alibi_slopes(num_heads)  # (H,)
    offsets = relative_positions(T).astype(jnp.float32)  # (T, T): j - i, exact in float32
    bias = slopes[:, None, None] * offsets[None, :, :]  # (H, T, T): m_h (j - i), one rounding per value
    return bias.reshape(-1)  # (H * T * T,): head-major, then query rows, then keys
