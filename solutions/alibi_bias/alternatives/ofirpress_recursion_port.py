"""Correct: ofirpress's get_slopes recursion (the paper's code; Hugging Face BLOOM builds the same slopes as
two float32 powers), rewritten, and the bias as a difference of two of BLOOM's key-position rows.

The recursion: a power of two n gets the geometric sequence that starts and steps at 2 ** (-8 / n); any
other n gets that sequence for c = 2 ** floor(log2 n), followed by the first n - c of every other slope of
the answer for 2c. The bias is written as m j - m i (BLOOM's m j rows minus their diagonal), which is the
paper's m (j - i) up to float32 rounding, well inside the tolerance.
"""

import math

import jax.numpy as jnp


def _geometric(n):
    step = 2.0 ** (-8.0 / n)  # the first slope, and the ratio between neighbours
    return [step ** (k + 1) for k in range(n)]


def _slopes(n):
    if math.log2(n).is_integer():
        return _geometric(n)
    c = 2 ** math.floor(math.log2(n))
    return _geometric(c) + _slopes(2 * c)[::2][: n - c]


def alibi_bias(seed, T, num_heads):
    """ALiBi's bias m_h (j - i) for a length-T self-attention, (num_heads * T * T,) float32."""
    m = jnp.asarray(_slopes(num_heads), dtype=jnp.float32)[:, None]  # (H, 1)
    positions = jnp.arange(T, dtype=jnp.float32)[None, :]  # (1, T)
    rows = m * positions  # (H, T): BLOOM's bias, m_h j, the same for every query
    bias = rows[:, None, :] - rows[:, :, None]  # (H, T, T): m j - m i
    return bias.reshape(-1)  # (H * T * T,)
