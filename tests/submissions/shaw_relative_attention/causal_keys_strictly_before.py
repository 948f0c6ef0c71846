"""Self-attention with relative position representations (Shaw, Uszkoreit and Vaswani, 2018).

The module tree (names, shapes, initialisers) is fixed in each `setup()`:
Flax derives every parameter's random key from its path, so keep it as given.
Your task: write the two `__call__` bodies marked TODO. The entry function at the
bottom is already wired (parameters from the seed, apply, flatten); leave it as it is.
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
        T = length
        k = self.max_relative_position
        query_pos = jnp.arange(T)[:, None]
        key_pos = jnp.arange(T)[None, :]
        offset = jnp.maximum(jnp.minimum(key_pos - query_pos, k), -k)
        return self.table[offset + k]


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

    def __call__(self, x, causal):
        """Lets every position attend to every position (if causal, to itself and earlier ones).

        Args:
            x: (T, D) float32, the sequence.
            causal: bool; if True, query i sees only keys j <= i.

        Returns:
            (T, D) float32.
        """
        T, D = x.shape
        H = self.num_heads
        hd = D // H
        q = self.query(x).reshape(T, H, hd).swapaxes(0, 1)
        k = self.key(x).reshape(T, H, hd).swapaxes(0, 1)
        v = self.value(x).reshape(T, H, hd).swapaxes(0, 1)
        a_k = self.relative_key(T)
        a_v = self.relative_value(T)

        scores = jnp.einsum("hid,hjd->hij", q, k) + jnp.einsum("hid,ijd->hij", q, a_k)
        scores = scores / jnp.sqrt(jnp.float32(hd))
        if causal:
            query_pos = jnp.arange(T)[:, None]
            key_pos = jnp.arange(T)[None, :]
            visible = key_pos < query_pos  # only keys before the query
            scores = jnp.where(visible, scores, MASK_VALUE)
        weights = jax.nn.softmax(scores, axis=-1)
        out = weights @ v + jnp.einsum("hij,ijd->hid", weights, a_v)
        return self.out(out.swapaxes(0, 1).reshape(T, D))


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
