"""Correct alternative: parameters from the pinned linen tree, the forward in numpy float64.

The Flax module keeps the stub's `setup()`; its `__call__` only touches every projection once so that
`init` creates each kernel (a parameter's value depends on its path, not on what it was applied to).
The slopes come from the ALiBi repository's recursive rule in Python floats, the bias is the paper's
figure, -m (i - j), written below the diagonal only (the mask hides the rest), and the softmax is
written out. Eager only: numpy cannot work on traced arrays (the grader then calls it without jax.jit).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import flax.linen as nn


class AlibiAttention(nn.Module):
    d_model: int
    num_heads: int

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)
        self.k = nn.Dense(self.d_model, use_bias=False)
        self.v = nn.Dense(self.d_model, use_bias=False)
        self.o = nn.Dense(self.d_model, use_bias=False)

    def __call__(self, x):
        return self.o(self.q(x) + self.k(x) + self.v(x))


def _slopes(n):
    """The repository's get_slopes: a geometric sequence for a power of two; otherwise the one of the
    largest power of two below n, then every other slope of the sequence twice as long."""
    if math.log2(n).is_integer():
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start ** (i + 1) for i in range(n)]
    below = 2 ** math.floor(math.log2(n))
    return _slopes(below) + _slopes(2 * below)[0::2][: n - below]


def alibi_attention(seed, x, num_heads):
    """Initialises an AlibiAttention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x64 = np.asarray(x, dtype=np.float64)  # (T, D)
    T, D = x64.shape
    H = int(num_heads)
    hd = D // H
    model = AlibiAttention(D, H)
    with jax.ensure_compile_time_eval():
        variables = model.init(jax.random.PRNGKey(int(seed)), jnp.zeros((2, D), jnp.float32))
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), variables["params"])

    def split(h):  # (T, D) -> (H, T, hd)
        return h.reshape(T, H, hd).transpose(1, 0, 2)

    q, k, v = (split(x64 @ p[name]["kernel"]) for name in ("q", "k", "v"))
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    slopes = np.array(_slopes(H))[:, None, None]  # (H, 1, 1)
    below = np.where(j <= i, -(i - j), 0)  # (T, T): the paper's figure, zero where the mask hides
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(hd) + slopes * below  # (H, T, T)
    scores = np.where(j <= i, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    out = (weights @ v).transpose(1, 0, 2).reshape(T, D) @ p["o"]["kernel"]  # (T, D)
    return out.astype(np.float32).reshape(-1)  # (T * D,)
