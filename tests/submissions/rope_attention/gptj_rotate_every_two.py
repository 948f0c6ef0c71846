"""Causal self-attention with rotary position embeddings (RoPE; Su et al., 2021), laid out as Hugging
Face's LlamaAttention lays it out: each head's queries and keys turned, pair by pair, through an angle
that grows with their position, so that a query-key dot product depends on how far apart they are.

The module tree (names, shapes, initialisers) is fixed in `setup()`:
Flax derives every parameter's random key from its path, so keep it as given.
Your task: write the bodies marked TODO: the helpers (three of the kata rope's, and apply_rope, which
is rope without its seed: carry your code over), the attention's steps (split and merge the heads, the
scores, the weights) and the `__call__` that wires them. The entry function at the bottom is already
wired (parameters from the seed, apply, flatten); leave it as it is.
"""

import math  # noqa: F401

import jax
import jax.numpy as jnp
import numpy as np  # noqa: F401
import flax.linen as nn

# Replaces the score of a key that a query may not see: softmax then gives it weight 0.
MASK_VALUE = jnp.finfo(jnp.float32).min


def inverse_frequencies(d, base):
    """The frequency of every pair: theta_k = base ** (-2k / d), k = 0 .. d/2 - 1.

    Args:
        d: int, even, >= 2: the features per head.
        base: float > 1 (10000 in the paper); a traced scalar under jax.jit, so use jnp, not math.

    Returns:
        (d/2,) float32, radians per position: theta_0 = 1, falling towards 1 / base.
    """
    return 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))


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
    pos = jnp.arange(T, dtype=jnp.float32) + offset
    return jnp.outer(pos, inverse_frequencies(d, base))


def rotate_half(x):
    """Each feature's partner in the half-split layout, turned a quarter: (-second half, first half).

    Args:
        x: (..., d) float32, d even; pair k is features (k, k + d/2).

    Returns:
        (..., d) float32: [-x_(d/2), .., -x_(d-1), x_0, .., x_(d/2-1)].
    """
    x1, x2 = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([-x2, x1], axis=-1)



def rotate_pairs(x):
    x_even, x_odd = x[..., ::2], x[..., 1::2]
    return jnp.stack([-x_odd, x_even], axis=-1).reshape(x.shape)


def apply_rope(x, offset, base, interleaved):
    """Turns each pair of features of x by its position times the pair's frequency.

    Row t of x sits at position p = offset + t; pair k (k = 0 .. d/2 - 1) turns by the angle
    p * theta_k, theta_k = base ** (-2k / d), counter-clockwise:
        (a, b) -> (a cos - b sin, b cos + a sin).
    Half-split (interleaved=False, Hugging Face's Llama): pair k is features (k, k + d/2).
    Interleaved (interleaved=True, the paper and Meta's code): pair k is features (2k, 2k + 1).

    Args:
        x: (T, H, d) float32, positions first, then heads; d even.
        offset: int >= 0, the position of row 0.
        base: float > 1 (10000 in the paper); a traced scalar under jax.jit.
        interleaved: bool, which features make a pair.

    Returns:
        (T, H, d) float32.
    """
    seq_len, _, dim = x.shape
    freqs = angles(seq_len, offset, dim, base)  # (T, d/2)
    # GPT-J's rotate_every_two, each angle repeated for its two features
    emb = jnp.repeat(freqs, 2, axis=-1)  # (T, d): 0 0 1 1 ...
    partner = rotate_pairs(x)
    cos = jnp.cos(emb)[:, None, :]  # (T, 1, d)
    sin = jnp.sin(emb)[:, None, :]
    return x * cos + partner * sin


class RopeAttention(nn.Module):
    """One causal self-attention layer with RoPE: rotated queries and keys, scaled dot products.

    Attributes:
        d_model: model width D; every projection maps D -> D.
        num_heads: number of heads H; D must be divisible by H.
        base: RoPE's base (rope_theta in Hugging Face's configs).
    """

    d_model: int
    num_heads: int
    base: float

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.k = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.v = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)
        self.o = nn.Dense(self.d_model, use_bias=False)  # kernel (D, D)

    def split_heads(self, t):
        """(T, D) -> (T, H, d_head): head h gets columns h * d_head .. (h + 1) * d_head - 1."""
        T, D = t.shape
        return t.reshape(T, self.num_heads, D // self.num_heads)


    def merge_heads(self, t):
        """(T, H, d_head) -> (T, D): split_heads undone."""
        T, H, dh = t.shape
        return t.reshape(T, H * dh)


    def scores(self, q, k):
        """Every head's score of every (query i, key j) pair.

        Args:
            q, k: (T, H, d_head) float32, the queries and keys split into heads and rotated.

        Returns:
            (H, T, T) float32: q_i . k_j / sqrt(d_head).
        """
        head_dim = q.shape[-1]
        return jnp.einsum("qhd,khd->hqk", q, k) / jnp.sqrt(head_dim)


    def weights(self, scores):
        """The attention weights: the keys after each query hidden, softmax over the keys.

        Args:
            scores: (H, T, T) float32, from scores().

        Returns:
            (H, T, T) float32: each query's weights over the keys sum to 1; 0 where j > i.
        """
        T = scores.shape[-1]
        causal_mask = jnp.tril(jnp.ones((T, T), dtype=bool))
        scores = jnp.where(causal_mask, scores, MASK_VALUE)
        return jax.nn.softmax(scores, axis=-1)


    def __call__(self, x):
        """Lets every position of `x` attend over itself and the positions before it.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        q = apply_rope(self.split_heads(self.q(x)), 0, self.base, False)
        k = apply_rope(self.split_heads(self.k(x)), 0, self.base, False)
        v = self.split_heads(self.v(x))
        attn = self.weights(self.scores(q, k))
        out = jnp.einsum("hqk,khd->qhd", attn, v)
        return self.o(self.merge_heads(out))



def rope_attention(seed, x, num_heads, base):
    """Initialises a RopeAttention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, one sequence of T vectors of width D.
        num_heads: int, H; D must be divisible by H, and D // H even.
        base: float > 1, RoPE's base; a traced scalar under jax.jit.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = RopeAttention(d_model=int(x.shape[1]), num_heads=int(num_heads), base=base)
    # lazy_init traces the forward on the inputs' shapes only, and ensure_compile_time_eval makes
    # the parameters concrete even under jax.jit: the random initialisers stay out of the
    # compiled program, which makes compiling fast.
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), jax.ShapeDtypeStruct(x.shape, x.dtype))
    out = model.apply(variables, x)  # (T, D)
    return out.reshape(-1)  # (T * D,)
