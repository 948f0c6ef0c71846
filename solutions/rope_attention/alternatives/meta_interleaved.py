"""Correct alternative: Meta's llama layout, the interleaved rotation on kernels converted back to Meta's.

Meta's llama/model.py rotates the pairs (2k, 2k + 1): `precompute_freqs_cis` makes exp(i p theta_k),
`apply_rotary_emb` views each head's features as complex numbers x_2k + i x_(2k+1) and multiplies.
Hugging Face's conversion script (convert_llama_weights_to_hf.py, `permute`) reorders the output
features of each head of wq and wk so that the half-split rotation on the converted weights gives the
same scores: Hugging Face's feature j of a head is Meta's feature ORDER[j], ORDER = 0, 2, 4, ..., 1, 3,
5, .... The stub's kernels are in Hugging Face's layout, so this file undoes the permutation on the q
and k kernels (v and o are never permuted) and runs Meta's interleaved rotation on them: the layer's
output is the reference's.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


def meta_order(num_heads, head_dim):
    """(D,): for every column of a Hugging Face q or k kernel, the column of Meta's that it holds."""
    order = np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)])  # 0, 2, 4, .., 1, 3, 5, ..
    return np.concatenate([h * head_dim + order for h in range(num_heads)])


def precompute_freqs_cis(dim, end, theta):
    freqs = 1.0 / (theta ** (jnp.arange(0, dim, 2, dtype=jnp.float32)[: dim // 2] / dim))
    t = jnp.arange(end, dtype=jnp.float32)
    return jnp.exp(1j * jnp.outer(t, freqs))  # (end, dim/2) complex64: polar(1, t * freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    """(T, H, hd) each, pairs (2k, 2k + 1) as complex numbers times freqs_cis (broadcast over the heads)."""
    def rotate(t):
        pairs = t.reshape(*t.shape[:-1], -1, 2)  # (T, H, hd/2, 2)
        z = jax.lax.complex(pairs[..., 0], pairs[..., 1]) * freqs_cis[:, None, :]
        return jnp.stack([jnp.real(z), jnp.imag(z)], axis=-1).reshape(t.shape)
    return rotate(xq), rotate(xk)


class RopeAttention(nn.Module):
    d_model: int
    num_heads: int
    base: float

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D), Hugging Face's layout
        self.k = nn.Dense(self.d_model, use_bias=False)
        self.v = nn.Dense(self.d_model, use_bias=False)
        self.o = nn.Dense(self.d_model, use_bias=False)

    def __call__(self, x):
        return self.o(self.q(x) + self.k(x) + self.v(x))  # only there so that init creates every kernel


def forward(p, x, num_heads, base):
    T, D = x.shape
    hd = D // num_heads
    to_meta = np.argsort(meta_order(num_heads, hd))  # Meta's column c is Hugging Face's column to_meta[c]
    wq, wk = p["q"]["kernel"][:, to_meta], p["k"]["kernel"][:, to_meta]  # Meta's wq, wk (as (in, out))
    xq = (x @ wq).reshape(T, num_heads, hd)
    xk = (x @ wk).reshape(T, num_heads, hd)
    xv = (x @ p["v"]["kernel"]).reshape(T, num_heads, hd)
    xq, xk = apply_rotary_emb(xq, xk, precompute_freqs_cis(hd, T, base))
    scores = jnp.einsum("ihd,jhd->hij", xq, xk) / math.sqrt(hd)
    mask = jnp.triu(jnp.full((T, T), -jnp.inf), k=1)  # Meta's mask: -inf above the diagonal
    weights = jax.nn.softmax(scores + mask, axis=-1)
    out = jnp.einsum("hij,jhd->ihd", weights, xv).reshape(T, D)
    return out @ p["o"]["kernel"]


def rope_attention(seed, x, num_heads, base):
    """Initialises a RopeAttention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H, and D // H even.
        base: float > 1, RoPE's base.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = RopeAttention(int(x.shape[1]), int(num_heads), base)
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), jax.ShapeDtypeStruct(x.shape, x.dtype))
    return forward(variables["params"], x, int(num_heads), base).reshape(-1)  # (T * D,)
