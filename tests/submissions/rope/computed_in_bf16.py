"""RoPE, run in bfloat16 like the rest of the model; only the result goes back to float32."""

import jax.numpy as jnp


def rope(seed, x, offset, base, interleaved):
    T, H, d = x.shape
    inv_freq = base ** (-jnp.arange(0, d, 2, dtype=jnp.float32) / d)
    ang = jnp.arange(offset, offset + T, dtype=jnp.float32)[:, None] * inv_freq  # angles in float32
    xb = x.astype(jnp.bfloat16)
    c, s = jnp.cos(ang).astype(jnp.bfloat16), jnp.sin(ang).astype(jnp.bfloat16)
    if interleaved:
        a, b = xb[..., 0::2], xb[..., 1::2]
        out = jnp.stack([a * c[:, None] - b * s[:, None], b * c[:, None] + a * s[:, None]], axis=-1).reshape(T, H, d)
    else:
        a, b = xb[..., : d // 2], xb[..., d // 2:]
        out = jnp.concatenate([a * c[:, None] - b * s[:, None], b * c[:, None] + a * s[:, None]], axis=-1)
    return out.astype(jnp.float32).reshape(-1)
