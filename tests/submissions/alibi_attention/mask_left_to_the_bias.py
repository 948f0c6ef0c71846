"""ALiBi self-attention (Press, Smith and Lewis, 2022): causal multi-head attention whose scores are
penalised in proportion to the distance between query and key, one slope per head, and nothing else
that knows about positions.

The module tree (names, shapes, initialisers) is fixed in `setup()`:
Flax derives every parameter's random key from its path, so keep it as given.
Your task: write the bodies marked TODO: the two helpers (the slopes and the bias, the kata
alibi_bias without its seed), the attention's steps (split and merge the heads, the scores, the
weights) and the `__call__` that wires them. The entry function at the bottom is already wired
(parameters from the seed, apply, flatten); leave it as it is.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np  # noqa: F401
import flax.linen as nn

# Replaces the score of a key that a query may not see: softmax then gives it weight 0.
MASK_VALUE = jnp.finfo(jnp.float32).min


def alibi_slopes(num_heads):
    """The slope m_h of every head, the ALiBi paper's geometric sequences.

    With c the largest power of two <= num_heads: m_h = 2 ** (-8 (h + 1) / c) for the
    first c heads, h = 0 .. c - 1; the other num_heads - c heads take every other slope
    of the 2c-head sequence, m_(c + j) = 2 ** (-4 (2j + 1) / c), j = 0 .. num_heads - c - 1.

    Args:
        num_heads: int >= 1, the number of heads H.

    Returns:
        (H,) float32, every slope in (0, 1).
    """
    closest = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * (h + 1) / closest) for h in range(closest)]
    if closest < num_heads:
        # the heads past the power of two: every other slope of the sequence for 2 * closest heads
        slopes += [2 ** (-4 * (2 * j + 1) / closest) for j in range(num_heads - closest)]
    return jnp.array(slopes, dtype=jnp.float32)


def alibi_bias(length, num_heads):
    """ALiBi's bias of every (head, query, key) triple of a length-T self-attention.

    bias[h, i, j] = m_h * (j - i): zero on the diagonal, negative for keys before the
    query, growing with the distance. The causal mask is not part of it.

    Args:
        length: int T >= 1, the number of positions (queries and keys alike).
        num_heads: int >= 1, the number of heads H.

    Returns:
        (H, T, T) float32.
    """
    idx = jnp.arange(length)
    rel = idx[None, :] - idx[:, None]  # rel[i, j] = j - i
    return alibi_slopes(num_heads)[:, None, None] * rel[None, :, :]


class AlibiAttention(nn.Module):
    """One causal self-attention layer with ALiBi: scaled dot products plus a per-head linear bias.

    Attributes:
        d_model: model width D; every projection maps D -> D.
        num_heads: number of heads H; D must be divisible by H.
    """

    d_model: int
    num_heads: int

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.k = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.v = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.o = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)

    def split_heads(self, t):
        """(T, D) -> (H, T, d_head): head h gets columns h * d_head .. (h + 1) * d_head - 1."""
        T, D = t.shape
        H = self.num_heads
        return jnp.einsum("thd->htd", t.reshape(T, H, D // H))

    def merge_heads(self, t):
        """(H, T, d_head) -> (T, D): split_heads undone."""
        H, T, dh = t.shape
        return jnp.einsum("htd->thd", t).reshape(T, H * dh)

    def scores(self, q, k, bias):
        """Every head's score of every (query i, key j) pair.

        Args:
            q, k: (H, T, d_head) float32, the queries and keys split into heads.
            bias: (H, T, T) float32, from alibi_bias.

        Returns:
            (H, T, T) float32: q_i . k_j / sqrt(d_head) + bias[h, i, j]; the bias is not scaled.
        """
        head_dim = q.shape[-1]
        logits = jnp.einsum("hqd,hkd->hqk", q, k) / jnp.sqrt(head_dim)
        return logits + bias

    def weights(self, scores):
        """The attention weights: the keys after each query hidden, softmax over the keys.

        Args:
            scores: (H, T, T) float32, from scores().

        Returns:
            (H, T, T) float32: each query's weights over the keys sum to 1; 0 where j > i.
        """
        # the ALiBi bias already pushes the far keys down, so no separate mask
        return jax.nn.softmax(scores, axis=-1)

    def __call__(self, x):
        """Lets every position of `x` attend over itself and the positions before it.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        T = x.shape[0]
        q = self.split_heads(self.q(x))
        k = self.split_heads(self.k(x))
        v = self.split_heads(self.v(x))
        attn = self.weights(self.scores(q, k, alibi_bias(T, self.num_heads)))
        out = jnp.einsum("hqk,hkd->hqd", attn, v)
        return self.o(self.merge_heads(out))


def alibi_attention(seed, x, num_heads):
    """Initialises an AlibiAttention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = AlibiAttention(d_model=int(x.shape[1]), num_heads=int(num_heads))
    # lazy_init traces the forward on the inputs' shapes only, and ensure_compile_time_eval makes
    # the parameters concrete even under jax.jit: the random initialisers stay out of the
    # compiled program, which makes compiling fast.
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), jax.ShapeDtypeStruct(x.shape, x.dtype))
    out = model.apply(variables, x)  # (T, D)
    return out.reshape(-1)  # (T * D,)
