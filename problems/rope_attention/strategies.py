"""Generated inputs for rope_attention.

Every new combination of seed and sizes is one more program to trace and compile, so the sizes come
from a short menu of configurations; the first two are the statement's worked examples and the third
its larger fixed example (problem.toml), so drawing them costs no new compilation. The base is not
static (a float argument runs in the same compiled program whatever its value), so it is drawn freely
from its own menu. The widths D repeat (4, 12, 16, 24): initialising kernels of a new shape costs more
than a new length does. Between them the configurations vary every size on its own (T, D, num_heads,
head_dim = D // num_heads) and make every part of the layer matter:

- head_dim is 4, 6 or 8 in every configuration but one: two pairs or more per head, so the layout of
  the pairs (half-split or interleaved) and the base both show. With head_dim 2 (one pair per head,
  the statement's third worked example, kept because it must pass too) the two layouts are the same
  and theta_0 = 1 whatever the base;
- head_dim 6 has an odd number of pairs (three), where a layout that only looks right for powers of two
  goes wrong;
- num_heads 2, 3 and 4 besides 1: rotating the whole (T, D) projection before splitting it into
  heads pairs features of different heads, and merging the heads in the wrong order scrambles them,
  neither of which one head can show;
- T = 33, the longest: positions up to 32, where an angle computed from a wrong frequency is far off,
  and still far below the positions where float32 angles lose precision (the statement's note).

The base menu has the published 10000 (Llama 2) and 500000 (Llama 3), a small 100 and 10 (the pairs turn
fast, so every position differs), and a fractional 17.5, so that rounding the base to an int (or using
it as an int somewhere) does not pass. Code that ignores the base and uses 10000 fails on every other.

The values of x, which cost nothing to vary, are drawn in [-1, 1], each on its own (no fill value: an x
whose rows are all alike gives every query the same values to average, whatever its weights, and hides
every position mistake), and about half the draws are multiplied by 3 so that the scores spread and the
softmax is far from flat (a uniform softmax hides where the weights go).
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# (seed, T, D, num_heads)
CONFIGS = (
    (0, 4, 4, 1),  # the statement's first two worked examples: one head of 4
    (0, 4, 4, 2),  # the third: two heads of 2, one pair each (the base cannot matter)
    (2, 12, 12, 2),  # the fourth fixed example: two heads of 6, three pairs each
    (1, 20, 24, 3),  # three heads of 8
    (3, 9, 16, 4),  # four heads of 4
    (1, 33, 16, 2),  # T past 32; two heads of 8
)
BASES = (100.0, 10000.0, 500000.0, 10.0, 17.5)
SCALES = (1.0, 3.0)
VALUES = st.floats(min_value=-1.0, max_value=1.0, width=32, allow_subnormal=False)


@st.composite
def _case(draw):
    seed, T, D, num_heads = draw(st.sampled_from(CONFIGS))
    x = draw(hnp.arrays(np.float32, (T, D), elements=VALUES, fill=st.nothing()))  # (T, D), every value drawn
    scale = draw(st.sampled_from(SCALES))
    base = draw(st.sampled_from(BASES))
    return {"seed": seed, "x": (x * np.float32(scale)).astype(np.float32), "num_heads": num_heads, "base": base}


def inputs():
    """Strategy of argument dicts {"seed", "x", "num_heads", "base"}."""
    return _case()
