"""Generated inputs for rel_shift.

Every distinct T is one more program to compile, so T comes from a short menu: the fixed examples'
sizes first (3 is the worked example's, so a failure shrinks towards it), then a few larger ones.

x is a readable pattern plus freely drawn float32 noise. The pattern, 100 * (i + 1) + offset, makes
every value different from every other one, so a value in the wrong cell always shows; the noise
(up to 1e4 in size, fractional, usually larger than the pattern) makes the values arbitrary, so that
neither a detour through an integer type nor an answer built from the pattern goes unnoticed. A
failure shrinks the noise to zero in a step or two, and what the learner then sees is the pattern
alone: the hundreds name the query (plus one), the rest is the offset.
"""

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SEQ_LENS = st.sampled_from([3, 1, 4, 2, 7, 12])
NOISE = st.floats(min_value=-1e4, max_value=1e4, width=32, allow_subnormal=False)


def pattern(T):
    """(T, 2T - 1) float32: x[i, c] = 100 * (i + 1) + (c - (T - 1)), all values distinct for T <= 50."""
    query = np.arange(T)[:, None]  # (T, 1)
    offset = np.arange(2 * T - 1)[None, :] - (T - 1)  # (1, 2T - 1)
    return (100 * (query + 1) + offset).astype(np.float32)  # (T, 2T - 1)


@st.composite
def inputs(draw):
    """Draws one call's arguments: {"seed": 0, "x": (T, 2T - 1) float32 array of distinct values}."""
    T = draw(SEQ_LENS)
    noise = draw(hnp.arrays(np.float32, (T, 2 * T - 1), elements=NOISE))  # (T, 2T - 1)
    x = pattern(T) + noise  # (T, 2T - 1) float32
    assume(np.unique(x).size == x.size)
    return {"seed": 0, "x": x}
