"""Generated inputs for t5_attention.

Every new combination of seed, sizes, bucket settings and `causal` is one more program to
trace and compile, so the sizes come from a short menu of configurations and `causal` is
drawn both ways for each. Between them the configurations vary every size on its own (T, D,
num_heads, head_dim = D // num_heads, num_buckets, max_distance), so code that hard-codes
one of them fails. The second has T = 20 with max_distance = 5: most offsets lie beyond
max_distance and share the last bucket of their side, the case that decides how the layer
behaves on sequences longer than it was trained on. The first configuration is the
statement's worked example; problem.toml has fixed examples on all three (the first two
both ways), so drawing them costs at most one new compilation. The values of x, which cost nothing to vary, are
drawn freely in [-1, 1].

No (num_buckets, max_distance) pair on the menu makes the log-spaced bucket formula a whole
number for any size below max_distance, in either the bidirectional or the one-directional scheme
(tests/problems/test_t5_attention.py checks it in integer arithmetic): at such a size correct float32
and float64 code may floor to neighbouring buckets and so look up different biases.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# (seed, T, D, num_heads, num_buckets, max_distance)
CONFIGS = (
    (0, 4, 4, 2, 8, 6),  # the statement's worked example
    (1, 20, 6, 3, 8, 5),  # T = 4 * max_distance: far offsets share the last bucket
    (2, 12, 6, 2, 16, 24),  # head_dim 3, 16 buckets, T below max_distance; D as above (fewer inits)
)
CAUSAL = st.booleans()
VALUES = st.floats(min_value=-1.0, max_value=1.0, width=32, allow_subnormal=False)


@st.composite
def _case(draw):
    seed, T, D, num_heads, num_buckets, max_distance = draw(st.sampled_from(CONFIGS))
    return {
        "seed": seed,
        "x": draw(hnp.arrays(np.float32, (T, D), elements=VALUES)),  # (T, D)
        "num_heads": num_heads,
        "num_buckets": num_buckets,
        "max_distance": max_distance,
        "causal": draw(CAUSAL),
    }


def inputs():
    """Strategy of argument dicts {"seed", "x", "num_heads", "num_buckets", "max_distance", "causal"}."""
    return _case()
