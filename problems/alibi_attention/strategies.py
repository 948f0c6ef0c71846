"""Generated inputs for alibi_attention.

Every new combination of seed and sizes is one more program to trace and compile, so the sizes come
from a short menu of configurations; the first two are the statement's worked examples and the third
its larger fixed example (problem.toml), so drawing them costs no new compilation. The widths D repeat
(4, 12, 24, 32): initialising kernels of a new shape costs more than a new length does. Between them the
configurations vary every size on its own (T, D, num_heads, head_dim = D // num_heads) and make every
part of the layer matter:

- num_heads 3, 6 and 12 are not powers of two: the slope rule's second sequence is used (one, two and
  four of its slopes), and slopes computed as 2^(-8 (h + 1) / H) for every head are wrong there (they
  agree on 1, 2, 4 and 16 heads);
- num_heads 12 and 16 have heads past the eighth, where a table of eight slopes runs out;
- head_dim is 2, 3 or 4, never 1, so scaling the bias along with q . k, or not scaling at all, shows;
- num_heads 1 (one slope of 1/256, barely a bias) is kept: it must pass too;
- T = 33, the longest: distances up to 32, where the steepest head's bias (32 * 1/4 = -8) outweighs
  any q . k and the far keys' weights all but vanish.

The values of x, which cost nothing to vary, are drawn in [-1, 1], each on its own (no fill value: an x
whose rows are all alike gives every query the same values to average, whatever its weights, and hides
the bias entirely), and about half the draws are multiplied by 3 so that the scores spread and the
softmax is far from flat (a uniform softmax hides where the weights go).
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# (seed, T, D, num_heads)
CONFIGS = (
    (0, 4, 4, 2),  # the statement's first worked example: head_dim 2, slopes 1/16 and 1/256
    (0, 4, 4, 1),  # the second: one head of 4, slope 1/256
    (2, 12, 12, 3),  # the third fixed example: three heads of 4, slopes 1/16, 1/256 and 1/4
    (1, 20, 24, 12),  # twelve heads of 2: eight of the first sequence, four of the second
    (3, 9, 24, 6),  # six heads of 4: slopes 1/4, 1/16, 1/64, 1/256, then 1/2 and 1/8
    (1, 33, 12, 4),  # T past 32; four heads of 3
    (2, 6, 32, 16),  # sixteen heads of 2: slopes 2^(-1/2) .. 2^-8
)
SCALES = (1.0, 3.0)
VALUES = st.floats(min_value=-1.0, max_value=1.0, width=32, allow_subnormal=False)


@st.composite
def _case(draw):
    seed, T, D, num_heads = draw(st.sampled_from(CONFIGS))
    x = draw(hnp.arrays(np.float32, (T, D), elements=VALUES, fill=st.nothing()))  # (T, D), every value drawn
    scale = draw(st.sampled_from(SCALES))
    return {"seed": seed, "x": (x * np.float32(scale)).astype(np.float32), "num_heads": num_heads}


def inputs():
    """Strategy of argument dicts {"seed", "x", "num_heads"}."""
    return _case()
