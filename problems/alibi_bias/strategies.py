"""Generated inputs for alibi_bias.

Two Python ints, each drawn once from a short menu (the first entry of each is the worked example's, so
shrinking heads there and that program is compiled already); every combination is one small compile.

- num_heads from 1 to 32, nine of its fifteen entries not a power of two: those are the head counts where the
  slope rule has its second part (the heads past c = 2 ** floor(log2 H)), so the tempting shortcuts
  (2 ** (-8 (h + 1) / H) for every head, the first H slopes of the next power of two, the other half of
  the 2c-head sequence, the slopes sorted) agree with it on powers of two and differ everywhere else.
  6, 7, 12, 20, 24 and 31 have two or more heads past c, so that the second one must be right too; 10 and up
  have slopes that are not powers of two, which bfloat16 cannot hold. 1 (slope 1/256) and 2 are the degenerate
  counts: they must pass, but they tell few mistakes apart.
- T from 1 to 64. With T = 1 the bias is a single 0 per head whatever the convention; 2 shows the first
  step either side of the diagonal; 64 takes the values up to 63 * 2 ** (-1/4) = 52.98 (20 heads and up),
  where slopes rounded to bfloat16 are off by up to 0.07.
"""

from hypothesis import strategies as st

SEQ_LENS = [4, 1, 2, 5, 16, 64]
POWERS_OF_TWO = [1, 2, 4, 8, 16, 32]
OTHER_HEAD_COUNTS = [3, 5, 6, 7, 10, 12, 20, 24, 31]
HEAD_COUNTS = [3, 1, 2, 5, 6, 7, 8, 12, 4, 10, 16, 20, 24, 31, 32]  # the worked example's first; the two lists above


@st.composite
def _case(draw):
    T = draw(st.sampled_from(SEQ_LENS))
    num_heads = draw(st.sampled_from(HEAD_COUNTS))
    return {"seed": 0, "T": T, "num_heads": num_heads}


def inputs():
    """Strategy of argument dicts {"seed", "T", "num_heads"}, all Python ints."""
    return _case()
