"""Generated inputs for t5_relative_bias.

Every argument is a Python int or bool, so every input is its own program to trace and compile (and
its own random table to draw): the inputs come from a short list of configurations. Between them
they vary every size on its own, so that code which hard-codes one fails: q_len and k_len differ in
both directions (and agree once), num_heads runs from 1 to 4, num_buckets takes even and odd values,
max_distance lies below the longest distance in most rows (so the clamp shows) and above it in one,
and both rules (bidirectional True and False) appear with several heads. The first three are also
the fixed examples in problem.toml, so drawing them costs no new compilation.

Every (num_buckets, max_distance, bidirectional) here avoids the exact-boundary configurations: with
nb the buckets of one direction (num_buckets // 2 when bidirectional, num_buckets otherwise),
max_exact = nb // 2 and k = nb - max_exact, there are no integers d, m with 1 <= m < k and
d**k * max_exact**m == max_distance**m * max_exact**k. For such a pair the log position of size d
would be the whole number max_exact + m, and correct float32 and float64 implementations could floor
it to different buckets, hence read different rows of the table. `exact_boundaries` finds them;
tests/problems/test_t5_relative_bias.py checks this list with it.
"""

from hypothesis import strategies as st

# (seed, q_len, k_len, num_heads, num_buckets, max_distance, bidirectional)
CONFIGS = (
    (0, 3, 5, 2, 8, 16, True),  # the statement's worked example: fewer queries than keys
    (1, 10, 10, 1, 8, 4, True),  # the statement's long example: most offsets beyond max_distance
    (2, 6, 4, 3, 7, 5, False),  # one-directional, odd num_buckets, more queries than keys
    (3, 9, 13, 4, 10, 6, True),  # num_buckets // 2 odd; far offsets in both directions
    (4, 14, 5, 2, 8, 6, False),  # one-directional, even num_buckets; far offsets before the query
)


def exact_boundaries(num_buckets, max_distance, bidirectional):
    """The (d, m) pairs, max_exact < d < max_distance, whose log position is the whole number
    max_exact + m (integer arithmetic only); empty for a safe configuration."""
    nb = num_buckets // 2 if bidirectional else num_buckets
    max_exact = nb // 2
    k = nb - max_exact
    return [(d, m) for m in range(1, k) for d in range(max_exact + 1, max_distance)
            if d**k * max_exact**m == max_distance**m * max_exact**k]


def inputs():
    """Strategy of argument dicts for t5_relative_bias, in signature order."""
    names = ("seed", "q_len", "k_len", "num_heads", "num_buckets", "max_distance", "bidirectional")
    return st.sampled_from(CONFIGS).map(lambda config: dict(zip(names, config)))
