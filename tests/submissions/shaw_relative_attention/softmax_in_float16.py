"""Self-attention with relative position representations (Shaw, Uszkoreit and Vaswani, 2018).

The module tree (names, shapes, initialisers) is fixed in each `setup()`:
Flax derives every parameter's random key from its path, so keep it as given.
Your task: write the bodies marked TODO: the lookup, the attention's steps (split and
merge the heads, the scores, the weights, the heads' outputs) and the `__call__` that
wires them. The entry function at the bottom is already wired (parameters from the seed,
apply, flatten); leave it as it is.
"""

import jax
import jax.numpy as jnp
import flax.linen as nn

# Replaces the score of a key that a query may not see: softmax then gives it weight 0.
MASK_VALUE = jnp.finfo(jnp.float32).min


class RelativePosition(nn.Module):
    """A table of 2k + 1 learned vectors, one per clipped offset -k .. k.

    Attributes:
        max_relative_position: k; offsets j - i beyond -k .. k share the end rows.
        d_head: width of each vector (the attention's head width).
    """

    max_relative_position: int
    d_head: int

    def setup(self):
        k = self.max_relative_position
        # (2k + 1, d_head): row r holds the vector of offset r - k
        self.table = self.param("table", nn.initializers.xavier_uniform(), (2 * k + 1, self.d_head))

    def __call__(self, length):
        """Looks up the vector of every (query i, key j) pair of a length-T sequence.

        Args:
            length: int T >= 1, the number of positions (queries and keys alike).

        Returns:
            (T, T, d_head) float32: entry [i, j] is the table row
            clip(j - i, -k, k) + k.
        """
        k = self.max_relative_position
        rows = []
        for i in range(length):
            rows.append([min(max(j - i, -k), k) + k for j in range(length)])
        index = jnp.array(rows, dtype=jnp.int32)  # (T, T)
        return self.table[index]


class ShawAttention(nn.Module):
    """Multi-head self-attention whose keys and values carry relative position vectors.

    Attributes:
        d_model: model width D; every projection maps D -> D.
        num_heads: number of heads H; D must be divisible by H.
        max_relative_position: k, the clipping distance of the relative tables.
    """

    d_model: int
    num_heads: int
    max_relative_position: int

    def setup(self):
        d_head = self.d_model // self.num_heads
        self.query = nn.Dense(self.d_model)  # kernel (D, D) lecun normal, bias (D,) zeros
        self.key = nn.Dense(self.d_model)  # kernel (D, D), bias (D,)
        self.value = nn.Dense(self.d_model)  # kernel (D, D), bias (D,)
        self.out = nn.Dense(self.d_model)  # kernel (D, D), bias (D,)
        # a_K and a_V: one table (2k + 1, d_head) each, shared by every head
        self.relative_key = RelativePosition(self.max_relative_position, d_head)
        self.relative_value = RelativePosition(self.max_relative_position, d_head)

    def split_heads(self, t):
        """(T, D) -> (H, T, d_head): head h gets columns h * d_head .. (h + 1) * d_head - 1."""
        T, D = t.shape
        return jnp.swapaxes(t.reshape(T, self.num_heads, D // self.num_heads), 0, 1)

    def merge_heads(self, t):
        """(H, T, d_head) -> (T, D): split_heads undone."""
        H, T, d = t.shape
        return jnp.swapaxes(t, 0, 1).reshape(T, H * d)

    def scores(self, q, k, a_k):
        """Every head's score of every (query i, key j) pair.

        Args:
            q, k: (H, T, d_head) float32, the queries and keys split into heads.
            a_k: (T, T, d_head) float32, the relative key vectors, shared by every head.

        Returns:
            (H, T, T) float32: (q_i . k_j + q_i . a_K[i, j]) / sqrt(d_head).
        """
        return (q @ jnp.swapaxes(k, 1, 2) + jnp.einsum("hid,ijd->hij", q, a_k)) / jnp.sqrt(q.shape[-1])

    def weights(self, scores, causal):
        """The attention weights: if causal, the keys after each query hidden; softmax over the keys.

        Args:
            scores: (H, T, T) float32, from scores().
            causal: bool; if True, query i keeps only keys j <= i.

        Returns:
            (H, T, T) float32: each query's weights over the keys sum to 1.
        """
        if causal:
            T = scores.shape[-1]
            scores = jnp.where(jnp.tril(jnp.ones((T, T), bool)), scores, MASK_VALUE)
        # half precision softmax to save memory
        return jax.nn.softmax(scores.astype(jnp.float16), axis=-1).astype(jnp.float32)

    def attend(self, weights, v, a_v):
        """Every head's output.

        Args:
            weights: (H, T, T) float32, from weights().
            v: (H, T, d_head) float32, the values split into heads.
            a_v: (T, T, d_head) float32, the relative value vectors, shared by every head.

        Returns:
            (H, T, d_head) float32: row i is sum_j w_ij (v_j + a_V[i, j]).
        """
        return weights @ v + jnp.einsum("hij,ijd->hid", weights, a_v)

    def __call__(self, x, causal):
        """Lets every position attend to every position (if causal, to itself and earlier ones).

        Args:
            x: (T, D) float32, the sequence.
            causal: bool; if True, query i sees only keys j <= i.

        Returns:
            (T, D) float32.
        """
        T = x.shape[0]
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        a_k = self.relative_key(T)
        a_v = self.relative_value(T)
        probs = self.weights(self.scores(q, k, a_k), causal)
        ctx = self.attend(probs, v, a_v)
        return self.out(self.merge_heads(ctx))


def shaw_relative_attention(seed, x, num_heads, max_relative_position, causal):
    """Initialises a ShawAttention layer from `seed` and applies it to `x`.

    Args:
        seed: int, seeds jax.random.PRNGKey for the parameters.
        x: (T, D) float32, the input sequence; D divisible by num_heads.
        num_heads: int, H.
        max_relative_position: int k >= 1, the clipping distance.
        causal: bool, whether query i sees only keys j <= i.

    Returns:
        (T * D,) float32: the (T, D) output flattened row by row.
    """
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = ShawAttention(
        d_model=int(x.shape[1]),
        num_heads=int(num_heads),
        max_relative_position=int(max_relative_position),
    )
    # lazy_init traces the forward on the inputs' shapes only, and ensure_compile_time_eval makes
    # the parameters concrete even under jax.jit: the random initialisers stay out of the
    # compiled program, which makes compiling fast.
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), jax.ShapeDtypeStruct(x.shape, x.dtype),
                                    bool(causal))
    y = model.apply(variables, x, bool(causal))  # (T, D)
    return y.reshape(-1)  # (T * D,)
