"""Transformer-XL relative attention over a memory segment and the current segment.

The module tree (names, shapes, initialisers) is fixed in `setup()`: Flax derives every
parameter's random key from its path, so keep it as given. Your task: write the bodies
marked TODO: the sinusoid, the attention's steps (split the heads, the scores, the
weights) and the `__call__` that wires them. The entry function at the bottom is already
wired (parameters from the seed, apply, flatten); leave it as it is.
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
        D = self.d_model
        inv_freq = 10000.0 ** (-jnp.arange(D // 2, dtype=jnp.float32) / D)  # (D/2,)
        angles = distances[:, None] * inv_freq[None, :]  # (L, D/2)
        emb = jnp.zeros((distances.shape[0], D), jnp.float32)
        emb = emb.at[:, 0::2].set(jnp.sin(angles))
        emb = emb.at[:, 1::2].set(jnp.cos(angles))
        return emb


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

    def split_heads(self, t):
        """(L, D) -> (L, H, d_head): head h gets columns h * d_head .. (h + 1) * d_head - 1."""
        H = self.num_heads
        return t.reshape(t.shape[0], H, self.d_model // H)

    def scores(self, x, memory):
        """Every head's score of every (query i, key j) pair: the four terms, divided by sqrt(d_head),
        and the keys after each query's position hidden.

        Args:
            x: (T, D) float32, the current segment (the queries).
            memory: (M, D) float32, the previous segment; the keys are the rows of [memory; x].

        Returns:
            (H, T, M + T) float32: MASK_VALUE where key j lies after query i's position M + i
            (any value at or below -1e9, -inf included, counts as hidden: the softmax gives it
            weight 0).
        """
        T, D = x.shape
        M = memory.shape[0]
        H = self.num_heads
        dh = D // H
        ctx = jnp.concatenate([memory, x], axis=0)  # (K, D)
        K = ctx.shape[0]
        q = self.split_heads(self.query(x))  # (T, H, dh)
        k = self.split_heads(self.key(ctx))  # (K, H, dh)

        q_pos = M + jnp.arange(T)
        k_pos = jnp.arange(K)
        dist = q_pos[:, None] - k_pos[None, :]  # (T, K)
        emb = self.sinusoid(dist.reshape(-1).astype(jnp.float32))  # (T * K, D)
        r = self.split_heads(self.pos_proj(emb)).reshape(T, K, H, dh)

        term_a = jnp.einsum("ihd,jhd->hij", q, k)
        term_b = jnp.einsum("ihd,ijhd->hij", q, r)
        term_c = jnp.einsum("hd,jhd->hj", self.u, k)[:, None, :]
        term_d = jnp.einsum("hd,ijhd->hij", self.v, r)
        scores = (term_a + term_b + term_c + term_d) / jnp.sqrt(jnp.float32(dh))
        return jnp.where((dist >= 0)[None], scores, MASK_VALUE)

    def weights(self, scores):
        """The attention weights: softmax over the keys.

        Args:
            scores: (H, T, M + T) float32, from scores() (the hidden keys already masked).

        Returns:
            (H, T, M + T) float32: each query's weights over the keys sum to 1.
        """
        return jax.nn.softmax(scores, axis=-1)

    def __call__(self, x, memory):
        """Lets each row of `x` attend over the rows of [memory; x] at or before it.

        Args:
            x: (T, D) float32, the current segment; row i sits at absolute position M + i.
            memory: (M, D) float32, the previous segment (M may be 0); row j sits at
                absolute position j.

        Returns:
            (T, D) float32.
        """
        T, D = x.shape
        ctx = jnp.concatenate([memory, x], axis=0)  # (K, D)
        v = self.split_heads(self.value(ctx))  # (K, H, dh)
        attn = self.weights(self.scores(x, memory))
        out = jnp.einsum("hij,jhd->ihd", attn, v).reshape(T, D)
        return self.out(out)


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
