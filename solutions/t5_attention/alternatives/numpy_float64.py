"""Correct alternative: parameters from the pinned linen tree, the forward in numpy float64.

The Flax modules keep the stub's `setup()`s; their `__call__`s only touch every submodule once
so that `init` creates each parameter (a parameter's value depends on its path, not on what it
was applied to). The layer is then computed on the pulled-out arrays in float64, the way
Hugging Face's PyTorch T5Attention arranges it: the causal mask is a large negative number
added to the position bias, and the bias is added to the scores. Eager only: numpy cannot
work on traced arrays (the grader then calls it without jax.jit).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


class RelativePositionBias(nn.Module):
    num_buckets: int
    num_heads: int
    max_distance: int
    bidirectional: bool

    def setup(self):
        self.embedding = self.param(
            "embedding",
            nn.initializers.variance_scaling(1.0, "fan_in", "normal", out_axis=0),
            (self.num_buckets, self.num_heads),
        )  # (num_buckets, H)

    def __call__(self, length):
        return self.embedding


class T5Attention(nn.Module):
    d_model: int
    num_heads: int
    num_buckets: int
    max_distance: int
    causal: bool

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)
        self.k = nn.Dense(self.d_model, use_bias=False)
        self.v = nn.Dense(self.d_model, use_bias=False)
        self.o = nn.Dense(self.d_model, use_bias=False)
        self.relative_attention_bias = RelativePositionBias(
            self.num_buckets, self.num_heads, self.max_distance, bidirectional=not self.causal
        )

    def __call__(self, x):
        return self.o(self.q(x) + self.k(x) + self.v(x)) + self.relative_attention_bias(x.shape[0]).sum()


def _bucket(relative_position, bidirectional, num_buckets, max_distance):
    """(T, T) int64 offsets (memory minus context) -> buckets, in float64 arithmetic."""
    rel = relative_position.astype(np.int64)
    buckets = np.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).astype(np.int64) * num_buckets
        rel = np.abs(rel)
    else:
        rel = -np.minimum(rel, 0)
    max_exact = num_buckets // 2
    with np.errstate(divide="ignore"):  # log(0) on the small sizes, which the `where` drops
        scaled = np.log(rel / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    large = max_exact + np.floor(np.where(rel < max_exact, 0.0, scaled)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(rel < max_exact, rel, large)


def t5_attention(seed, x, num_heads, num_buckets, max_distance, causal):
    """Initialises a T5Attention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H.
        num_buckets: int, even and >= 4, rows of the relative bias table.
        max_distance: int > num_buckets // 2, the offset size where the log-spaced
            buckets stop growing.
        causal: bool, True for a decoder layer: causal mask and one-directional
            buckets; False for an encoder layer: no mask, bidirectional buckets.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x64 = np.asarray(x, dtype=np.float64)  # (T, D)
    T, D = x64.shape
    H = int(num_heads)
    hd = D // H
    model = T5Attention(D, H, int(num_buckets), int(max_distance), bool(causal))
    with jax.ensure_compile_time_eval():
        variables = model.init(jax.random.PRNGKey(int(seed)), jnp.zeros((2, D), jnp.float32))
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), variables["params"])

    def split(h):  # (T, D) -> (H, T, hd)
        return h.reshape(T, H, hd).transpose(1, 0, 2)

    q, k, v = (split(x64 @ p[name]["kernel"]) for name in ("q", "k", "v"))
    context = np.arange(T)[:, None]
    memory = np.arange(T)[None, :]
    buckets = _bucket(memory - context, not causal, int(num_buckets), int(max_distance))  # (T, T)
    position_bias = p["relative_attention_bias"]["embedding"][buckets].transpose(2, 0, 1)  # (H, T, T)
    if causal:
        position_bias = position_bias + np.where(memory > context, np.finfo(np.float64).min, 0.0)
    scores = q @ k.transpose(0, 2, 1) + position_bias  # (H, T, T)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    out = (weights @ v).transpose(1, 0, 2).reshape(T, D) @ p["o"]["kernel"]  # (T, D)
    return out.astype(np.float32).reshape(-1)  # (T * D,)
