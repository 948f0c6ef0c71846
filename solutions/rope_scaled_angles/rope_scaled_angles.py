"""RoPE's angle table under the four published context-extension rescalings (position interpolation,
NTK-aware, dynamic NTK, llama3).

Three bodies to write, each marked TODO: RoPE's plain frequencies, the frequencies rescaled by `method`,
and the table of angles that multiplies them by the positions. The two helpers are graded alone as well
(`grade rope_scaled_angles --part scaled_frequencies`), and a failure points at the first of them that is
wrong; rope_scaled_angles may use them or do without (a helper left raising NotImplementedError is passed
over).
"""

import math

import jax.numpy as jnp

# llama3's two band edges, fixed as every released Llama 3.1 / 3.2 checkpoint sets them: wavelengths shorter
# than original_max_len / HIGH_FREQ_FACTOR are kept, longer than original_max_len / LOW_FREQ_FACTOR divided.
LOW_FREQ_FACTOR = 1.0
HIGH_FREQ_FACTOR = 4.0


def inverse_frequencies(head_dim, base):
    """RoPE's frequencies before any rescaling: w_k = base ** (-2k / head_dim).

    Args:
        head_dim: int, even, >= 4: the size of one head's query or key vector (head_dim // 2 pairs).
        base: float > 1, RoPE's base (10000 in the paper); a traced float32 scalar under jax.jit.

    Returns:
        (head_dim // 2,) float32: w_0 = 1 radian per position, then falling geometrically.
    """
    exponents = jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim  # (d/2,): 2k / d
    return 1.0 / jnp.power(jnp.asarray(base, jnp.float32), exponents)  # (d/2,): 1 / base^(2k/d)


def scaled_frequencies(head_dim, base, factor, original_max_len, method, seq_len):
    """The frequencies w'_k that RoPE turns by once a context-extension method has rescaled them.

    Args:
        head_dim: int, even, >= 4.
        base: float > 1, RoPE's base (traced under jax.jit).
        factor: float >= 1, the extension factor s (traced under jax.jit).
        original_max_len: int >= 1, the length L the model was trained at.
        method: one of "linear", "ntk", "dynamic", "llama3".
        seq_len: int >= 1, the length being encoded (dynamic's scale depends on it).

    Returns:
        (head_dim // 2,) float32: w'_k, one per pair, for
        "linear": w_k / factor;
        "ntk": w_k recomputed with base * factor ** (head_dim / (head_dim - 2)) for base;
        "dynamic": the same with alpha = factor * seq_len / L - (factor - 1) for factor when
        seq_len > L, and w_k unchanged when seq_len <= L;
        "llama3": by wavelength 2 pi / w_k: w_k below L / 4, w_k / factor above L, and between them
        (1 - g) w_k / factor + g w_k with g = (L / wavelength - 1) / 3.
    """
    if method == "linear":
        return inverse_frequencies(head_dim, base) / factor  # (d/2,): every frequency slowed alike
    if method == "llama3":
        inv_freq = inverse_frequencies(head_dim, base)  # (d/2,)
        wavelength = 2.0 * math.pi / inv_freq  # (d/2,): positions per full turn of each pair
        g = (original_max_len / wavelength - LOW_FREQ_FACTOR) / (HIGH_FREQ_FACTOR - LOW_FREQ_FACTOR)  # (d/2,)
        blended = (1.0 - g) * inv_freq / factor + g * inv_freq  # (d/2,): 0 at wavelength L, 1 at L / 4
        return jnp.where(wavelength < original_max_len / HIGH_FREQ_FACTOR, inv_freq,
                         jnp.where(wavelength > original_max_len / LOW_FREQ_FACTOR, inv_freq / factor, blended))
    if method == "ntk":
        alpha = factor  # the scale itself, whatever the length
    elif seq_len > original_max_len:  # "dynamic" past the trained length: the scale this length needs
        alpha = factor * seq_len / original_max_len - (factor - 1.0)
    else:  # "dynamic" within the trained length: plain RoPE (the formula's alpha is 1 at seq_len = L)
        return inverse_frequencies(head_dim, base)
    return inverse_frequencies(head_dim, base * jnp.power(alpha, head_dim / (head_dim - 2)))  # a larger base


def rope_scaled_angles(seed, T, head_dim, base, factor, original_max_len, method):
    """RoPE's angle table theta[p, k] = p * w'_k for positions p = 0 .. T-1 and pairs k = 0 .. head_dim/2 - 1,
    with RoPE's frequencies w_k = base ** (-2k / head_dim) rescaled by `method` (s = factor,
    L = original_max_len, d = head_dim):

    "linear" (position interpolation): w'_k = w_k / s;
    "ntk" (NTK-aware): w_k with base * s ** (d / (d - 2)) in place of base;
    "dynamic" (dynamic NTK): the same with alpha = s * T / L - (s - 1) in place of s when T > L, and
    plain RoPE when T <= L;
    "llama3": by wavelength 2 pi / w_k: kept below L / 4, divided by s above L, blended between.

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        T: int >= 1, the number of positions.
        head_dim: int, even, >= 4.
        base: float > 1, RoPE's base.
        factor: float >= 1, the extension factor s.
        original_max_len: int >= 1, the length L the model was trained at.
        method: "linear", "ntk", "dynamic" or "llama3".

    Returns:
        (T * (head_dim // 2),) float32: the (T, head_dim // 2) table flattened row by row.
    """
    del seed  # unused: the table has no parameters
    freqs = scaled_frequencies(head_dim, base, factor, original_max_len, method, T)  # (d/2,)
    positions = jnp.arange(T, dtype=jnp.float32)  # (T,): 0 .. T-1, exact in float32
    return (positions[:, None] * freqs[None, :]).reshape(-1)  # (T, d/2) -> (T * d/2,), row by row
