"""Correct: Hugging Face XLM / DistilBERT's create_sinusoidal_embeddings ported to JAX.

That function fills a whole table of positions 0 .. n_pos - 1: every column j first gets the angle
pos / 10000 ** (2 * (j // 2) / dim), then the even columns are overwritten with the sine of theirs and
the odd ones with the cosine. Here the table is built up to the last position needed and the rows from
offset on are read out of it, as a model reads its fixed embedding table.
"""

import jax.numpy as jnp


def sinusoidal_pe(seed, T, d_model, offset):
    """Sinusoidal position encoding of positions offset .. offset + T - 1, (T * d_model,) float32."""
    n_pos = offset + T
    pos = jnp.arange(n_pos, dtype=jnp.float32)[:, None]  # (n_pos, 1)
    j = jnp.arange(d_model)
    denom = jnp.power(10000.0, 2.0 * (j // 2) / d_model)  # (d,): one exponent per pair, repeated
    angle_table = pos / denom[None, :]  # (n_pos, d)
    table = jnp.zeros((n_pos, d_model), jnp.float32)
    table = table.at[:, 0::2].set(jnp.sin(angle_table[:, 0::2]))
    table = table.at[:, 1::2].set(jnp.cos(angle_table[:, 1::2]))
    return table[offset:].reshape(-1)  # (T * d_model,): rows offset .. offset + T - 1
