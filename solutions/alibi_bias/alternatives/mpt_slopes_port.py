"""Correct: Hugging Face MPT's slope construction (next power of two, the slopes at odd indices first, then
those at even indices, cut to num_heads), which gives the paper's slopes for every head count, with the bias
measured from each query as this problem asks (MPT itself measures it from the last key).
"""

import jax.numpy as jnp


def alibi_bias(seed, T, num_heads):
    """ALiBi's bias m_h (j - i) for a length-T self-attention, (num_heads * T * T,) float32."""
    p = 1
    while p < num_heads:  # the next power of two at or above num_heads
        p *= 2
    exponents = jnp.arange(1, p + 1, dtype=jnp.float32) * (8.0 / p)  # (p,)
    slopes = 1.0 / jnp.power(2.0, exponents)  # (p,): 2 ** (-8 k / p), k = 1 .. p
    if p != num_heads:
        slopes = jnp.concatenate([slopes[1::2], slopes[0::2]])[:num_heads]  # (H,)
    offsets = jnp.arange(T)[None, :] - jnp.arange(T)[:, None]  # (T, T): j - i
    bias = jnp.einsum("h,ij->hij", slopes, offsets.astype(jnp.float32))  # (H, T, T)
    return bias.reshape(-1)  # (H * T * T,)
