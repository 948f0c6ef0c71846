"""Correct alternative: Dai et al.'s relative-shift trick.

The sinusoid is built once for the K distances K-1, K-2, ..., 0 (not for every (i, j) pair),
projected once, and every query is scored against all K of them; a pad-reshape-slice then
moves each row so that cell (i, j) holds the score for distance (M + i) - j. The cells the
shift fills with other rows' numbers are exactly the masked ones. The sinusoid writes its
sines and cosines into strided column slices.
"""

import jax
import jax.numpy as jnp
import flax.linen as nn

# Replaces the score of a key that a query may not see: softmax then gives it weight 0.
MASK_VALUE = jnp.finfo(jnp.float32).min


class RelativeSinusoid(nn.Module):
    """Fixed sinusoid embedding of relative distances, sin and cos interleaved. No parameters.

    Attributes:
        d_model: D, the embedding width; must be even.
    """

    d_model: int

    def __call__(self, distances):
        """Embeds each distance as D/2 sines and D/2 cosines at geometric frequencies.

        With inv_freq[k] = 10000 ** (-2k / D) for k = 0 .. D/2 - 1, row n of the result
        holds sin(distances[n] * inv_freq[k]) in column 2k and cos(distances[n] * inv_freq[k])
        in column 2k + 1.

        Args:
            distances: (L,) float32, any real numbers (negative ones included).

        Returns:
            (L, D) float32.
        """
        L = distances.shape[0]
        even = jnp.arange(0, self.d_model, 2, dtype=jnp.float32)  # (D/2,): 0, 2, 4, ...
        inv_freq = jnp.exp(even * (-jnp.log(10000.0) / self.d_model))  # (D/2,)
        angles = jnp.outer(distances, inv_freq)  # (L, D/2)
        emb = jnp.zeros((L, self.d_model), jnp.float32)
        emb = emb.at[:, 0::2].set(jnp.sin(angles))
        return emb.at[:, 1::2].set(jnp.cos(angles))  # (L, D)

class RelativeAttention(nn.Module):
    """Multi-head causal attention with Transformer-XL's relative position terms.

    Queries come from the current segment `x`; keys and values from the memory segment
    followed by `x`. The score of query i and key j is the sum of four terms, all divided by
    sqrt(d_head): (a) q_i . k_j, (b) q_i . r_ij, (c) u . k_j, (d) v . r_ij, where r_ij is
    the sinusoid of the distance (M + i) - j passed through `pos_proj`.

    Attributes:
        d_model: D, the model width; every projection maps D -> D.
        num_heads: H; D must be divisible by H, d_head = D // H.
    """

    d_model: int
    num_heads: int

    def setup(self):
        d_head = self.d_model // self.num_heads
        self.query = nn.Dense(self.d_model, use_bias=False)  # W_q, kernel (D, D)
        self.key = nn.Dense(self.d_model, use_bias=False)  # W_k (content keys), kernel (D, D)
        self.value = nn.Dense(self.d_model, use_bias=False)  # W_v, kernel (D, D)
        self.pos_proj = nn.Dense(self.d_model, use_bias=False)  # W_r (position keys), kernel (D, D)
        self.out = nn.Dense(self.d_model, use_bias=False)  # W_o, kernel (D, D)
        # u and v are learned in a real model; here nothing is trained, so they start at
        # unit scale (like the chapter's torch.randn), large enough that terms (c) and (d)
        # visibly move the scores: at a scale like 0.02 a missing term could hide under the
        # tolerance. Flax draws their keys in the order they are created: u first, then v.
        unit_normal = nn.initializers.normal(stddev=1.0)
        self.u = self.param("u", unit_normal, (self.num_heads, d_head))  # (H, d_head), term (c)
        self.v = self.param("v", unit_normal, (self.num_heads, d_head))  # (H, d_head), term (d)
        self.sinusoid = RelativeSinusoid(self.d_model)  # no parameters

    def __call__(self, x, memory):
        """Lets each row of `x` attend over the rows of [memory; x] at or before it.

        Args:
            x: (T, D) float32, the current segment; row i sits at absolute position M + i.
            memory: (M, D) float32, the previous segment (M may be 0); row j sits at
                absolute position j.

        Returns:
            (T, D) float32.
        """
        T, M = x.shape[0], memory.shape[0]
        K = M + T
        H = self.num_heads
        d_head = self.d_model // H
        context = jnp.concatenate([memory, x], axis=0)  # (K, D)
        q = self.query(x).reshape(T, H, d_head).transpose(1, 0, 2)  # (H, T, d_head)
        k = self.key(context).reshape(K, H, d_head).transpose(1, 0, 2)  # (H, K, d_head)
        v = self.value(context).reshape(K, H, d_head).transpose(1, 0, 2)  # (H, K, d_head)

        # One embedding per distance, in decreasing order: column c is distance K - 1 - c.
        positions = jnp.arange(K - 1, -1, -1, dtype=jnp.float32)  # (K,)
        r = self.pos_proj(self.sinusoid(positions))  # (K, D)
        r = r.reshape(K, H, d_head).transpose(1, 0, 2)  # (H, K, d_head)

        ac = (q + self.u[:, None, :]) @ k.transpose(0, 2, 1)  # (H, T, K)
        bd_raw = (q + self.v[:, None, :]) @ r.transpose(0, 2, 1)  # (H, T, K), by distance column
        # The shift: cell (i, j) must read column j + (T - 1 - i) of row i.
        padded = jnp.pad(bd_raw, ((0, 0), (0, 0), (1, 0)))  # (H, T, K + 1)
        bd = padded.reshape(H, K + 1, T)[:, 1:, :].reshape(H, T, K)  # (H, T, K)

        scores = (ac + bd) / jnp.sqrt(jnp.float32(d_head))  # (H, T, K)
        causal = jnp.tril(jnp.ones((T, K), dtype=bool), k=M)  # (T, K): j <= M + i
        scores = jnp.where(causal, scores, MASK_VALUE)
        weights = jax.nn.softmax(scores, axis=-1)  # (H, T, K)
        heads = weights @ v  # (H, T, d_head)
        return self.out(heads.transpose(1, 0, 2).reshape(T, self.d_model))  # (T, D)

def transformer_xl_attention(seed, x, memory, num_heads):
    """Initialises a RelativeAttention from `seed` and applies it to one segment and its memory.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, the current segment, T >= 1, D even.
        memory: (M, D) float32, the previous segment, M >= 0.
        num_heads: int, H, dividing D.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    memory = jnp.asarray(memory, dtype=jnp.float32)  # (M, D)
    D = x.shape[1]
    model = RelativeAttention(d_model=int(D), num_heads=int(num_heads))
    # lazy_init traces the forward on the inputs' shapes only, and ensure_compile_time_eval makes
    # the parameters concrete even under jax.jit: the random initialisers stay out of the
    # compiled program, which makes compiling fast.
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (x, memory)]
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), *shapes)
    out = model.apply(variables, x, memory)  # (T, D)
    return out.reshape(-1)  # (T * D,)
