"""Correct alternative: parameters from the pinned linen tree, the forward in numpy float64.

The Flax module keeps the stub's `setup()`; its `__call__` only touches every projection once so that
`init` creates each kernel (a parameter's value depends on its path, not on what it was applied to).
Everything else is numpy in float64: the angles from Python floats, the half-split rotation written as
its two formulas, an explicit softmax over the keys each query may see. Eager only: numpy cannot work
on traced arrays (the grader then calls it without jax.jit, and the base arrives as a Python float).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


class RopeAttention(nn.Module):
    d_model: int
    num_heads: int
    base: float

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)
        self.k = nn.Dense(self.d_model, use_bias=False)
        self.v = nn.Dense(self.d_model, use_bias=False)
        self.o = nn.Dense(self.d_model, use_bias=False)

    def __call__(self, x):
        return self.o(self.q(x) + self.k(x) + self.v(x))


def rotated(t, base):
    """(T, H, hd) float64 -> the same, every head's pair (k, k + hd/2) turned by position * base^(-2k/hd)."""
    T, _, hd = t.shape
    half = hd // 2
    freq = np.array([base ** (-2.0 * k / hd) for k in range(half)])  # (hd/2,)
    angle = np.arange(T, dtype=np.float64)[:, None, None] * freq  # (T, 1, hd/2)
    first, second = t[..., :half], t[..., half:]
    return np.concatenate([first * np.cos(angle) - second * np.sin(angle),
                           second * np.cos(angle) + first * np.sin(angle)], axis=-1)


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
    x64 = np.asarray(x, dtype=np.float64)  # (T, D)
    T, D = x64.shape
    H = int(num_heads)
    hd = D // H
    model = RopeAttention(D, H, float(base))
    with jax.ensure_compile_time_eval():
        variables = model.init(jax.random.PRNGKey(int(seed)), jnp.zeros((2, D), jnp.float32))
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), variables["params"])
    q, k, v = ((x64 @ p[name]["kernel"]).reshape(T, H, hd) for name in ("q", "k", "v"))
    q, k = rotated(q, float(base)), rotated(k, float(base))
    scores = np.einsum("ihd,jhd->hij", q, k) / math.sqrt(hd)  # (H, T, T)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    scores = np.where(j <= i, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    out = np.einsum("hij,jhd->ihd", weights, v).reshape(T, D) @ p["o"]["kernel"]  # (T, D)
    return out.astype(np.float32).reshape(-1)  # (T * D,)
