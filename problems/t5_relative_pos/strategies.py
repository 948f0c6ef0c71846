"""Generated inputs for t5_relative_pos.

Small on purpose: every distinct (T, num_buckets, max_distance) costs one compilation. max_distance
stays a few steps above max_exact and T runs up to 40, so most draws reach past max_distance and
the clamp shows.
"""

from hypothesis import strategies as st

# Even bucket counts; 6 and 10 give an odd num_buckets // 2, so the exact and log-spaced
# parts of each half differ in size.
NUM_BUCKETS = st.sampled_from([8, 4, 6, 10, 12, 16, 32])
SEQ_LEN = st.integers(min_value=1, max_value=40)
SPAN = st.integers(min_value=1, max_value=12)  # max_distance - max_exact


@st.composite
def _t5_args(draw):
    T = draw(SEQ_LEN)
    num_buckets = draw(NUM_BUCKETS)
    max_exact = num_buckets // 4
    max_distance = max_exact + draw(SPAN)
    return {"seed": 0, "T": T, "num_buckets": num_buckets, "max_distance": max_distance}


def inputs():
    """Strategy of argument dicts {"seed", "T", "num_buckets", "max_distance"}, all Python ints."""
    return _t5_args()
