"""Correct: each pair as one complex number, multiplied by exp(i p theta_k) (Meta's Llama code does this with
torch.polar and view_as_complex on the interleaved pairs; here either layout), in jax.numpy complex64."""

import jax.numpy as jnp


def rope(seed, x, offset, base, interleaved):
    """RoPE of x (T, H, d) at positions offset .. offset + T - 1, (T * H * d,) float32."""
    T, H, d = x.shape
    if interleaved:
        real, imag = x[..., 0::2], x[..., 1::2]  # (T, H, d/2): x_2k + i x_(2k+1)
    else:
        real, imag = x[..., : d // 2], x[..., d // 2:]  # (T, H, d/2): x_k + i x_(k+d/2)
    z = real + 1j * imag  # (T, H, d/2) complex64
    freqs = 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))  # (d/2,)
    t = jnp.arange(T, dtype=jnp.float32) + offset  # (T,)
    unit = jnp.exp(1j * jnp.outer(t, freqs))  # (T, d/2): points on the unit circle, |unit| = 1
    turned = z * unit[:, None, :]  # (T, H, d/2): multiplying by e^(i phi) turns by phi
    if interleaved:
        out = jnp.stack([turned.real, turned.imag], axis=-1).reshape(T, H, d)  # back to side by side
    else:
        out = jnp.concatenate([turned.real, turned.imag], axis=-1)  # back to two halves
    return out.astype(jnp.float32).reshape(-1)  # (T * H * d,)
