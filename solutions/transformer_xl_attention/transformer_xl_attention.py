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
        L = distances.shape[0]
        k = jnp.arange(self.d_model // 2, dtype=jnp.float32)  # (D/2,)
        inv_freq = 10000.0 ** (-2.0 * k / self.d_model)  # (D/2,)
        angles = distances[:, None] * inv_freq[None, :]  # (L, D/2)
        pairs = jnp.stack([jnp.sin(angles), jnp.cos(angles)], axis=-1)  # (L, D/2, 2)
        return pairs.reshape(L, self.d_model)  # (L, D): sin in even columns, cos in odd ones


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
        return t.reshape(t.shape[0], self.num_heads, self.d_model // self.num_heads)

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
        T, M = x.shape[0], memory.shape[0]
        K = M + T  # keys: memory rows, then the rows of x
        H = self.num_heads
        d_head = self.d_model // H
        context = jnp.concatenate([memory, x], axis=0)  # (K, D)
        q = self.split_heads(self.query(x))  # (T, H, d_head)
        k = self.split_heads(self.key(context))  # (K, H, d_head)

        # distance[i, j] = (M + i) - j: how far key j lies behind query i (negative: ahead)
        distance = (M + jnp.arange(T))[:, None] - jnp.arange(K)[None, :]  # (T, K)
        sin_emb = self.sinusoid(distance.reshape(-1).astype(jnp.float32))  # (T * K, D)
        r = self.pos_proj(sin_emb).reshape(T, K, H, d_head)  # (T, K, H, d_head)

        content = jnp.einsum("ihd,jhd->hij", q + self.u, k)  # (H, T, K): terms (a) + (c)
        position = jnp.einsum("ihd,ijhd->hij", q + self.v, r)  # (H, T, K): terms (b) + (d)
        scores = (content + position) / jnp.sqrt(jnp.float32(d_head))  # (H, T, K)
        visible = distance >= 0  # (T, K): key j at or before query i's position M + i
        scores = jnp.where(visible[None, :, :], scores, MASK_VALUE)
        return scores

    def weights(self, scores):
        """The attention weights: softmax over the keys.

        Args:
            scores: (H, T, M + T) float32, from scores() (the hidden keys already masked).

        Returns:
            (H, T, M + T) float32: each query's weights over the keys sum to 1.
        """
        return jax.nn.softmax(scores, axis=-1)  # each query's weights over the keys sum to 1

    def __call__(self, x, memory):
        """Lets each row of `x` attend over the rows of [memory; x] at or before it.

        Args:
            x: (T, D) float32, the current segment; row i sits at absolute position M + i.
            memory: (M, D) float32, the previous segment (M may be 0); row j sits at
                absolute position j.

        Returns:
            (T, D) float32.
        """
        context = jnp.concatenate([memory, x], axis=0)  # (M + T, D): the values' rows
        v = self.split_heads(self.value(context))  # (M + T, H, d_head)
        weights = self.weights(self.scores(x, memory))  # (H, T, M + T)
        heads = jnp.einsum("hij,jhd->ihd", weights, v)  # (T, H, d_head)
        return self.out(heads.reshape(x.shape[0], self.d_model))  # (T, D)


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
