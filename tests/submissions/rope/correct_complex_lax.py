"""RoPE the way Meta's Llama code writes it: each pair a complex number, times a unit complex number."""

import jax.numpy as jnp
from jax import lax


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    freqs = 1.0 / (base ** (jnp.arange(0, d, 2)[: d // 2].astype(jnp.float32) / d))
    t = jnp.arange(offset, offset + T, dtype=jnp.float32)
    phase = jnp.outer(t, freqs)
    freqs_cis = lax.complex(jnp.cos(phase), jnp.sin(phase))  # polar(1, phase)
    if interleaved:
        pairs = x.reshape(T, H, d // 2, 2)
        xc = lax.complex(pairs[..., 0], pairs[..., 1])
    else:
        xc = lax.complex(x[..., : d // 2], x[..., d // 2:])
    yc = xc * freqs_cis[:, None, :]
    if interleaved:
        y = jnp.stack([jnp.real(yc), jnp.imag(yc)], axis=-1).reshape(T, H, d)
    else:
        y = jnp.concatenate([jnp.real(yc), jnp.imag(yc)], axis=-1)
    return y.reshape(-1)
