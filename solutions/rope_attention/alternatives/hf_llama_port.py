"""Correct alternative: Hugging Face's LlamaAttention (eager), ported to JAX on the stub's module tree.

transformers/models/llama/modeling_llama.py, in its own order and layout: the projections viewed as
(batch, T, heads, head_dim) and transposed to (batch, heads, T, head_dim); LlamaRotaryEmbedding's
cos and sin, from inv_freq = 1 / base^(2k / head_dim) and the angles concatenated with themselves
(so that feature k and feature k + head_dim/2 share an angle), in float32; apply_rotary_pos_emb with
rotate_half and unsqueeze_dim = 1 (the cos and sin get a head axis at 1); eager_attention_forward
(scaling = head_dim^-0.5, an additive causal mask of the most negative float32, a float32 softmax,
the output transposed back to (batch, T, heads, head_dim)); o_proj. Llama's Linear layers store
(out, in) weights and compute x W^T; nn.Dense stores (in, out) and computes x W, the same numbers.
Here num_key_value_heads = num_heads, attention_bias = False, rope_theta = base, no dropout.
"""

import jax
import jax.numpy as jnp
import flax.linen as nn


def rotate_half(t):
    """The second half of the features, negated, in front of the first: (-t2, t1)."""
    half = t.shape[-1] // 2
    return jnp.concatenate([-t[..., half:], t[..., :half]], axis=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = jnp.expand_dims(cos, unsqueeze_dim)  # (batch, 1, T, head_dim)
    sin = jnp.expand_dims(sin, unsqueeze_dim)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def rotary_embedding(head_dim, base, position_ids):
    """LlamaRotaryEmbedding.forward's cos and sin, (batch, T, head_dim) each."""
    inv_freq = 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))  # (head_dim/2,)
    freqs = position_ids[..., None].astype(jnp.float32) * inv_freq  # (batch, T, head_dim/2)
    emb = jnp.concatenate([freqs, freqs], axis=-1)  # (batch, T, head_dim)
    return jnp.cos(emb), jnp.sin(emb)


def eager_attention_forward(query, key, value, attention_mask, scaling):
    attn_weights = query @ key.transpose(0, 1, 3, 2) * scaling  # (batch, heads, T, T)
    attn_weights = attn_weights + attention_mask
    attn_weights = jax.nn.softmax(attn_weights.astype(jnp.float32), axis=-1).astype(query.dtype)
    attn_output = attn_weights @ value  # (batch, heads, T, head_dim)
    return attn_output.transpose(0, 2, 1, 3)  # (batch, T, heads, head_dim)


class RopeAttention(nn.Module):
    d_model: int
    num_heads: int
    base: float

    def setup(self):
        self.q = nn.Dense(self.d_model, use_bias=False)  # q_proj
        self.k = nn.Dense(self.d_model, use_bias=False)  # k_proj
        self.v = nn.Dense(self.d_model, use_bias=False)  # v_proj
        self.o = nn.Dense(self.d_model, use_bias=False)  # o_proj

    def __call__(self, x):
        hidden_states = x[None]  # (1, T, D): Llama works on a batch
        batch, T, _ = hidden_states.shape
        head_dim = self.d_model // self.num_heads
        hidden_shape = (batch, T, -1, head_dim)
        query_states = self.q(hidden_states).reshape(hidden_shape).transpose(0, 2, 1, 3)
        key_states = self.k(hidden_states).reshape(hidden_shape).transpose(0, 2, 1, 3)
        value_states = self.v(hidden_states).reshape(hidden_shape).transpose(0, 2, 1, 3)
        position_ids = jnp.arange(T)[None]  # (1, T)
        cos, sin = rotary_embedding(head_dim, self.base, position_ids)
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        min_value = jnp.finfo(jnp.float32).min
        causal_mask = jnp.where(jnp.arange(T)[None, :] > jnp.arange(T)[:, None], min_value, 0.0)[None, None]
        attn_output = eager_attention_forward(query_states, key_states, value_states, causal_mask,
                                              scaling=head_dim ** -0.5)
        attn_output = attn_output.reshape(batch, T, -1)  # (1, T, D)
        return self.o(attn_output)[0]


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
    x = jnp.asarray(x, dtype=jnp.float32)  # (T, D)
    model = RopeAttention(int(x.shape[1]), int(num_heads), base)
    with jax.ensure_compile_time_eval():
        variables = model.lazy_init(jax.random.PRNGKey(int(seed)), jax.ShapeDtypeStruct(x.shape, x.dtype))
    return model.apply(variables, x).reshape(-1)  # (T * D,)
