"""Generated inputs for transformer_xl_attention.

Every new combination of seed, num_heads and the shapes of `x` and `memory` builds and
compiles the layer once more, so the sizes come from a short menu, the same three shapes
as the fixed examples in problem.toml (drawing them costs no new compilation). Between
them the four sizes vary independently: T (segment length) takes 3, 4 and 2; M (memory
length) 2, 0 and 5, so the memory is shorter than the segment, empty, and longer than it;
D takes 8 and 12; num_heads 2, 4 and 3, giving head widths of 4 and 2. Hard-coding any one
of them fails on another row. Every row has T >= 2 (so the causal mask matters) and more
than one head (so dividing by sqrt(D) instead of sqrt(d_head) shows); two rows have M > 0
(so the memory offset matters). The values, which cost nothing to vary, are drawn freely,
each entry on its own (no fill value), so that rows differ and a wrong attention pattern
shows in the output.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# (seed, T, M, D, num_heads)
SHAPES = (
    (0, 3, 2, 8, 2),  # the statement's worked example: M < T
    (1, 4, 0, 8, 4),  # no memory yet; four heads of 2
    (2, 2, 5, 12, 3),  # memory longer than the segment; D = 12
)

VALUE = st.floats(min_value=-2.0, max_value=2.0, width=32, allow_subnormal=False)


@st.composite
def _case(draw):
    seed, T, M, D, H = draw(st.sampled_from(SHAPES))
    x = draw(hnp.arrays(np.float32, (T, D), elements=VALUE, fill=st.nothing()))  # (T, D)
    if M == 0:
        memory = np.zeros((0, D), np.float32)  # (0, D): an empty memory
    else:
        memory = draw(hnp.arrays(np.float32, (M, D), elements=VALUE, fill=st.nothing()))  # (M, D)
    return {"seed": seed, "x": x, "memory": memory, "num_heads": H}


def inputs():
    """Strategy of argument dicts for transformer_xl_attention, in signature order."""
    return _case()
