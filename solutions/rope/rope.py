"""Rotary position embedding (RoPE; Su et al., 2021): every pair of features turned by its position.

Five bodies to write, each marked TODO: the frequencies, the angles, the two ways of finding each feature's
partner in its pair (half-split and interleaved), and rope, which combines them. The four helpers are
graded alone as well (`grade rope --part angles`), and a failure points at the first of them that is
wrong; rope may use them or do without (a helper left raising NotImplementedError is passed over).
"""

import jax.numpy as jnp


def inverse_frequencies(d, base):
    """The frequency of every pair: theta_k = base ** (-2k / d), k = 0 .. d/2 - 1.

    Args:
        d: int, even, >= 2: the features per head.
        base: float > 1 (10000 in the paper); a traced scalar under jax.jit, so use jnp, not math.

    Returns:
        (d/2,) float32, radians per position: theta_0 = 1, falling towards 1 / base.
    """
    k = jnp.arange(d // 2, dtype=jnp.float32)  # (d/2,) pair index
    return jnp.asarray(base, jnp.float32) ** (-2.0 * k / d)  # (d/2,)


def angles(T, offset, d, base):
    """The angle of every pair at every position: (offset + t) * theta_k.

    Args:
        T: int >= 1, the number of positions.
        offset: int >= 0, the position of row 0 (a cache of offset earlier tokens).
        d: int, even, >= 2: the features per head.
        base: float > 1; a traced scalar under jax.jit.

    Returns:
        (T, d/2) float32: row t, column k is (offset + t) * base ** (-2k / d).
    """
    positions = offset + jnp.arange(T, dtype=jnp.float32)  # (T,): p = offset .. offset + T - 1
    return positions[:, None] * inverse_frequencies(d, base)[None, :]  # (T, d/2)


def rotate_half(x):
    """Each feature's partner in the half-split layout, turned a quarter: (-second half, first half).

    Args:
        x: (..., d) float32, d even; pair k is features (k, k + d/2).

    Returns:
        (..., d) float32: [-x_(d/2), .., -x_(d-1), x_0, .., x_(d/2-1)].
    """
    first, second = jnp.split(x, 2, axis=-1)  # (..., d/2) each
    return jnp.concatenate([-second, first], axis=-1)  # (..., d)


def rotate_pairs(x):
    """Each feature's partner in the interleaved layout, turned a quarter: (-x_(2k+1), x_2k) in place.

    Args:
        x: (..., d) float32, d even; pair k is features (2k, 2k + 1).

    Returns:
        (..., d) float32: [-x_1, x_0, -x_3, x_2, ..].
    """
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., d/2) each
    return jnp.stack([-odd, even], axis=-1).reshape(x.shape)  # (..., d/2, 2) -> (..., d)


def rope(seed, x, offset, base, interleaved):
    """Rotates each pair of features of x by its position times its frequency.

    Row t of x sits at position p = offset + t; theta_k = base ** (-2k / d), k = 0 .. d/2 - 1.
    Half-split (interleaved=False), pair k is (k, k + d/2):
        out[..., k] = x_k cos(p theta_k) - x_(k+d/2) sin(p theta_k)
        out[..., k + d/2] = x_(k+d/2) cos(p theta_k) + x_k sin(p theta_k)
    Interleaved (interleaved=True), pair k is (2k, 2k + 1):
        out[..., 2k] = x_2k cos - x_(2k+1) sin,  out[..., 2k + 1] = x_2k sin + x_(2k+1) cos

    Args:
        seed: int, unused; kept so that every kata has the same kind of signature.
        x: (T, H, d) float32: positions, then heads, then features; d even.
        offset: int >= 0, the position of row 0.
        base: float > 1 (10000 in the paper); a traced scalar under jax.jit.
        interleaved: bool, which features make a pair (see above).

    Returns:
        (T * H * d,) float32: the rotated (T, H, d) array flattened.
    """
    del seed  # unused: the rotation has no parameters
    T, H, d = x.shape
    a = angles(T, offset, d, base)  # (T, d/2)
    cos, sin = jnp.cos(a), jnp.sin(a)  # (T, d/2) each
    if interleaved:
        cos, sin = jnp.repeat(cos, 2, axis=-1), jnp.repeat(sin, 2, axis=-1)  # (T, d): c0 c0 c1 c1 ..
        partner = rotate_pairs(x)  # (T, H, d)
    else:
        cos, sin = jnp.concatenate([cos, cos], axis=-1), jnp.concatenate([sin, sin], axis=-1)  # (T, d): c0 c1 .. twice
        partner = rotate_half(x)  # (T, H, d)
    out = x * cos[:, None, :] + partner * sin[:, None, :]  # (T, H, d): the same angles for every head
    return out.reshape(-1)  # (T * H * d,)
