"""Generated inputs for rope.

The sizes, the offset and the layout are static (each combination is one small compile), so each comes from
a short menu whose first entry is the worked example's (shrinking heads there, and that program is compiled
already); base is a traced float (no compile of its own) and x's values cost nothing to vary.

- (T, H) from (3, 1) to (33, 1), with T = H among them ((4, 4), (2, 2)): there cos and sin of shape (T, d)
  broadcast against the head axis instead of the position axis run without an error, and only the values
  show the mistake. T = 1 is a single position, H = 1 a single head.
- d from 2 to 64. With d = 2 there is one pair: the two layouts pair the same features and the base has no
  effect (theta_0 = 1), so it must pass but cannot tell those mistakes apart; 4 and up can. 6 gives an odd
  number of pairs, where a split into halves and a split into even and odd features differ most.
- offset from 0 to 64, so the largest position is 64 + 33 - 1 = 96: float32 angles there are off by less than
  1e-5 however they are computed, while bfloat16 angles are off by 0.05 to 0.25. offset = 0 shows nothing of
  the offset mistakes; the others do.
- base from 100 (the statement's) to 500000 (Llama 3), and 17.5, a fractional one, so that a base cut to an
  int, or a hard-coded 10000, is wrong.
- interleaved both ways.
- x in [-1, 1]; one draw in four repeats one (H, d) row at every position, as a query and a key of equal
  content at different positions, where RoPE's dot products depend on the distance alone.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SIZES = [(3, 1), (1, 1), (4, 4), (7, 3), (16, 2), (2, 2), (33, 1)]  # (T, H)
HEAD_DIMS = [4, 2, 6, 8, 16, 64]
OFFSETS = [0, 1, 5, 64]
BASES = [100.0, 10000.0, 500000.0, 17.5]
MAX_POSITION = max(OFFSETS) + max(T for T, _ in SIZES) - 1  # 96
VALUES = st.floats(min_value=-1.0, max_value=1.0, width=32, allow_subnormal=False)


@st.composite
def _case(draw):
    T, H = draw(st.sampled_from(SIZES))
    d = draw(st.sampled_from(HEAD_DIMS))
    offset = draw(st.sampled_from(OFFSETS))
    base = draw(st.sampled_from(BASES))
    interleaved = draw(st.sampled_from([False, True]))
    if draw(st.sampled_from([False, False, False, True])):  # one draw in four: the same row everywhere
        row = draw(hnp.arrays(np.float32, (1, H, d), elements=VALUES))  # (1, H, d)
        x = np.repeat(row, T, axis=0)  # (T, H, d)
    else:
        x = draw(hnp.arrays(np.float32, (T, H, d), elements=VALUES))  # (T, H, d)
    return {"seed": 0, "x": x, "offset": offset, "base": base, "interleaved": interleaved}


def inputs():
    """Strategy of argument dicts {"seed", "x": (T, H, d) float32, "offset", "base", "interleaved"}."""
    return _case()
