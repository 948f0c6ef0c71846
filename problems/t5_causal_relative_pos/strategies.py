"""Generated inputs for t5_causal_relative_pos.

Small on purpose: every distinct (T, num_buckets, max_distance) costs one compilation. max_distance
stays a few steps above max_exact and T runs up to 40, so most draws reach past max_distance and
the clamp shows. Odd bucket counts are half the menu: only with them does the number of log-spaced
buckets (num_buckets - num_buckets // 2) differ from the number of exact ones.
"""

from hypothesis import strategies as st

# 8 first (the worked example's), so shrinking goes there; 2 and 3 are the smallest legal counts
# (max_exact = 1); 32 is T5's own.
NUM_BUCKETS = st.sampled_from([8, 5, 2, 3, 4, 6, 7, 9, 10, 11, 13, 16, 32])
SEQ_LEN = st.integers(min_value=1, max_value=40)
SPAN = st.integers(min_value=1, max_value=12)  # max_distance - max_exact


@st.composite
def _t5_args(draw):
    T = draw(SEQ_LEN)
    num_buckets = draw(NUM_BUCKETS)
    max_exact = num_buckets // 2
    max_distance = max_exact + draw(SPAN)
    return {"seed": 0, "T": T, "num_buckets": num_buckets, "max_distance": max_distance}


def inputs():
    """Strategy of argument dicts {"seed", "T", "num_buckets", "max_distance"}, all Python ints."""
    return _t5_args()
