"""Transformer-XL's relative shift: scores by (query, relative offset) to scores by (query, key)."""

import jax.numpy as jnp


def rel_shift(seed, x):
    """Moves every query's scores from relative-offset columns to key columns.

    Row i of `x` holds query i's score for every relative offset from -(T - 1)
    to T - 1, in that order: column c is offset c - (T - 1). The result holds,
    at row i and column j, the score of query i for key j, which is the one at
    offset j - i.

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        x: (T, 2T - 1) float32, T >= 1; x[i, c] is query i's score at relative
            offset c - (T - 1) (offset = key position minus query position).

    Returns:
        (T * T,) float32: the (T, T) matrix out[i, j] = x[i, j - i + T - 1],
        row i = query, column j = key, flattened row by row.
    """
    x = jnp.asarray(x, jnp.float32)
    T = x.shape[0]
    rel = jnp.arange(T)[None, :] - jnp.arange(T)[:, None]  # (T, T): j - i
    out = jnp.take_along_axis(x, rel, axis=1)
    return out.ravel()
