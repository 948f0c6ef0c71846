"""Generated inputs for `rmsnorm`: ranks 1 to 3, rows at very different scales, eps over 12 decades.

Each row of `x` (each vector along the last axis) gets its own scale: exactly zero, tiny
(1e-6 to 1e-3, where eps is comparable to the mean square), or moderate (0.1 to 1000).
eps is drawn log-uniformly from 1e-12 to 1. Shapes come from a short menu (every distinct shape
and seed is one more program to compile): rank 1 to 3, D = 1, a leading axis of 1, and shapes
that are not square, so that reducing over the wrong axis shows. The worked examples' shapes are
on it too.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SEEDS = st.sampled_from([0, 1, 2])
SHAPES = st.sampled_from([(4,), (2, 3), (2, 4), (1,), (3, 1), (1, 5), (3, 2, 4), (2, 1, 3)])
EPS = st.floats(min_value=-12.0, max_value=0.0).map(lambda k: float(10.0**k))
# Entries before the row's scale is applied.
UNIT = st.floats(min_value=-1.0, max_value=1.0, width=32, allow_subnormal=False)
ROW_SCALES = st.one_of(
    st.floats(min_value=-1.0, max_value=3.0).map(lambda k: 10.0**k),  # moderate
    st.floats(min_value=-6.0, max_value=-3.0).map(lambda k: 10.0**k),  # tiny
    st.just(0.0),  # all-zero row
)


@st.composite
def inputs(draw):
    """Draws one call's arguments: {"seed": int, "x": (..., D) float32 array, "eps": float}."""
    seed = draw(SEEDS)
    shape = draw(SHAPES)  # (..., D)
    eps = draw(EPS)
    unit = draw(hnp.arrays(np.float32, shape, elements=UNIT))  # (..., D)
    scales = draw(hnp.arrays(np.float64, shape[:-1], elements=ROW_SCALES))  # (...,)
    x = (unit * scales[..., None]).astype(np.float32)  # (..., D)
    return {"seed": seed, "x": x, "eps": eps}
