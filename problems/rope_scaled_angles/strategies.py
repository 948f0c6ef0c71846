"""Generated inputs for rope_scaled_angles.

Seven arguments, each drawn once from a short menu (the first entry of each is the first worked example's,
so shrinking heads there and that program is compiled already). T, head_dim, original_max_len and method
are static (each combination one small compile); base and factor are traced floats, so they cost nothing.

- T from 1 to 64: positions stay below 64, so that a float32 angle's rounding (about p * 7.5e-8 radians)
  stays far inside the tolerance. T = 1 is a single row of zeros whatever the method: it must pass, but
  it shows nothing. 17 is L + 1 for L = 16, the first length where dynamic scaling switches on.
- head_dim from 4 to 64 (never 2: NTK's exponent d / (d - 2) divides by zero there, and one pair has
  w_0 = 1 whatever the base). 4 makes the exponent a whole number (2), 6 gives an odd number of pairs.
- base: 10000 (the paper, Llama 2), 500000 (Llama 3) and 100 (long wavelengths come early: llama3's three
  bands all show up at small head_dim).
- factor: 2, 4, 8, 2.5 and 1. With factor 1 linear, ntk and llama3 are plain RoPE (degenerate, must pass);
  dynamic is not (alpha = T / L past L). 2.5 is there so that a factor rounded to a whole number fails.
- original_max_len from 2 to 64, so that T is drawn on both sides of it (dynamic is plain RoPE while
  T <= L, rescaled past it) and llama3's bands move: with L = 2 every pair is divided (llama3 is then
  linear), with 32 and 64 the first pairs are kept and some are blended.
- method: the four, each as likely.
"""

from hypothesis import strategies as st

SEQ_LENS = [4, 1, 8, 16, 17, 40, 64]
HEAD_DIMS = [8, 4, 6, 16, 32, 64]
BASES = [10000.0, 500000.0, 100.0]
FACTORS = [2.0, 1.0, 4.0, 8.0, 2.5]
ORIGINAL_LENS = [2, 8, 16, 32, 64]
METHODS = ["linear", "ntk", "dynamic", "llama3"]


@st.composite
def _case(draw):
    return {
        "seed": 0,
        "T": draw(st.sampled_from(SEQ_LENS)),
        "head_dim": draw(st.sampled_from(HEAD_DIMS)),
        "base": draw(st.sampled_from(BASES)),
        "factor": draw(st.sampled_from(FACTORS)),
        "original_max_len": draw(st.sampled_from(ORIGINAL_LENS)),
        "method": draw(st.sampled_from(METHODS)),
    }


def inputs():
    """Strategy of argument dicts {"seed", "T", "head_dim", "base", "factor", "original_max_len", "method"}:
    ints, floats and one of the four method names."""
    return _case()
