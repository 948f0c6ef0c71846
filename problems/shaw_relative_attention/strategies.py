"""Generated inputs for shaw_relative_attention.

Every new combination of seed, num_heads, max_relative_position, causal and the shape of `x`
compiles the layer once more, so those come from a short menu. Between them every size varies
on its own: T takes 3 to 6, D 6, 8 and 12, num_heads 1 to 4 (head widths 2, 4 and 6), k 1 to
4; hard-coding any one of them fails on another row. Three rows have T > k + 1, so some pairs
lie further apart than k and the clipping shows (a lookup that is not clipped reads other
rows there); one row has T <= k, where nothing is clipped. Two rows are causal and two are
not. Every row has T >= 3 and d_head >= 2, so the mask, the direction of the offset and the
1 / sqrt(d_head) scale all matter. The first two rows are the fixed examples' shapes in
problem.toml, so drawing them costs no new compilation. The values of `x`, which cost
nothing to vary, are drawn freely, each entry on its own.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# (seed, T, D, num_heads, max_relative_position, causal)
SHAPES = (
    (0, 4, 8, 2, 2, False),  # the statement's worked example: T = k + 2
    (1, 5, 8, 4, 1, True),  # causal; four heads of 2; k = 1 clips all but the neighbours
    (2, 3, 12, 3, 4, False),  # T <= k: no pair is clipped; D = 12
    (3, 6, 6, 1, 3, True),  # causal; one head of 6; the longest sequence
)

VALUE = st.floats(min_value=-2.0, max_value=2.0, width=32, allow_subnormal=False)


@st.composite
def _case(draw):
    seed, T, D, H, k, causal = draw(st.sampled_from(SHAPES))
    x = draw(hnp.arrays(np.float32, (T, D), elements=VALUE, fill=st.nothing()))  # (T, D)
    return {"seed": seed, "x": x, "num_heads": H, "max_relative_position": k, "causal": causal}


def inputs():
    """Strategy of argument dicts for shaw_relative_attention, in signature order."""
    return _case()
