"""Generated inputs for t5_forward.

Every new combination of the integer arguments and the two sequence lengths builds and
compiles a whole encoder-decoder (seconds, not milliseconds), so the sizes come from a
short list of shapes. Between them they vary every size on its own, so that code that
hard-codes one fails: vocab_size, d_model, d_ff and num_heads each take more than one
value, d_ff is not always 2 * d_model, the stacks have 1 to 3 blocks with unequal depths,
the encoder and decoder lengths differ, and num_buckets and max_distance change together
with the lengths so that each shape's bucket matrices hold both exact and log-spaced
buckets, and another shape's num_buckets or max_distance (or T5's 32 and 128) gives
different ones. Decoders have 4 or more positions, so the causal mask matters. Each new
parameter shape costs one more compiled random initialiser, so the second shape keeps the
first one's widths and varies the depths, the lengths and max_distance.

No (num_buckets, max_distance) here puts a size exactly on a log-bucket boundary, in
either direction's buckets (see BUCKET_MENU), so a correct float32 or float64 bucket
function finds the same bucket everywhere and the learned bias it looks up is the
reference's. The first two shapes are also the fixed examples in problem.toml, so drawing
them costs no new compilation. The token ids, which cost nothing to vary, are drawn freely.
"""

import numpy as np
from hypothesis import strategies as st

# (num_buckets, max_distance) pairs the shapes use. For each, neither the encoder's
# buckets per direction (nb = num_buckets // 2) nor the decoder's (nb = num_buckets) have
# a size d with nb // 2 < d < max_distance whose log-bucket value is a whole number: with
# me = nb // 2 and k = nb - me, no integers d, m with 1 <= m < k and
# d**k * me**m == max_distance**m * me**k (tests/problems/test_t5_forward.py checks it).
BUCKET_MENU = ((8, 6), (8, 10), (10, 11))

# (seed, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers, T_enc, T_dec,
#  num_buckets, max_distance)
SHAPES = (
    (0, 16, 8, 2, 16, 2, 2, 6, 4, 8, 6),  # the statement's walk-through
    (1, 16, 8, 2, 16, 1, 3, 8, 6, 8, 10),  # 1 + 3 blocks, longer sequences, another max_distance
    # (the walk-through's widths: no new parameter shape, so no new initialiser to compile)
    (2, 11, 12, 3, 20, 3, 1, 4, 8, 10, 11),  # every width new, d_ff != 2 * d_model; 3 + 1 blocks
)


def _ids(length, vocab_size):
    """Strategy: (length,) int32 array of token ids in [0, vocab_size)."""
    return st.lists(
        st.integers(min_value=0, max_value=vocab_size - 1), min_size=length, max_size=length
    ).map(lambda ids: np.array(ids, dtype=np.int32))


@st.composite
def _case(draw):
    seed, V, D, H, F, n_enc, n_dec, T_enc, T_dec, N, max_distance = draw(st.sampled_from(SHAPES))
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
        "num_buckets": N,
        "max_distance": max_distance,
    }


def inputs():
    """Strategy of argument dicts for t5_forward, in signature order."""
    return _case()
