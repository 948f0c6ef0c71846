"""Generated inputs for mini_t5_forward.

Every new combination of the integer arguments and the two sequence lengths builds and
compiles a whole encoder-decoder (seconds, not milliseconds), so the sizes come from a
short list of shapes. Between them they vary every size on its own, so that code that
hard-codes one (a width of 2 * d_model where d_ff belongs, a vocabulary of 16, two heads,
two layers) fails: vocab_size, d_model, d_ff and num_heads each take more than one value,
d_ff is not always 2 * d_model, the stacks have 1 to 3 blocks with unequal depths, and
the encoder and decoder lengths differ. Decoders have 2 or more positions, so the causal
mask matters. The first two shapes are also the fixed examples in problem.toml, so drawing
them costs no new compilation. The token ids, which cost nothing to vary, are drawn freely.
"""

import numpy as np
from hypothesis import strategies as st

# (seed, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers, T_enc, T_dec)
SHAPES = (
    (0, 16, 8, 2, 16, 2, 2, 4, 3),  # the statement's walk-through
    (1, 16, 8, 4, 16, 1, 3, 5, 2),  # four heads of 2; shallow encoder, deep decoder
    (2, 11, 12, 3, 20, 3, 1, 2, 6),  # every width new, d_ff != 2 * d_model; deep encoder, long decoder
)


def _ids(length, vocab_size):
    """Strategy: (length,) int32 array of token ids in [0, vocab_size)."""
    return st.lists(
        st.integers(min_value=0, max_value=vocab_size - 1), min_size=length, max_size=length
    ).map(lambda ids: np.array(ids, dtype=np.int32))


@st.composite
def _case(draw):
    seed, V, D, H, F, n_enc, n_dec, T_enc, T_dec = draw(st.sampled_from(SHAPES))
    return {
        "seed": seed,
        "x_enc_ids": draw(_ids(T_enc, V)),
        "x_dec_ids": draw(_ids(T_dec, V)),
        "vocab_size": V,
        "d_model": D,
        "num_heads": H,
        "d_ff": F,
        "num_enc_layers": n_enc,
        "num_dec_layers": n_dec,
    }


def inputs():
    """Strategy of argument dicts for mini_t5_forward, in signature order."""
    return _case()
