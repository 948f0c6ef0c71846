"""Generated inputs for sinusoidal_pe.

Three Python ints, each drawn once from a short menu (the first entry of each is the worked example's,
so shrinking heads there and that program is compiled already); every combination is one small compile.

- T from 1 to 48, so a single row, two rows and long tables all come up.
- d_model from 2 to 128. With 2 there is one pair, so the [sin | cos] layout, the frequency spacings and
  the inverted exponent all coincide with the paper's table (w_0 = 1): it must still pass, but only the
  other sizes tell those mistakes apart. 6 and 10 give an odd number of pairs.
- offset from 0 to 79, so that the last position is at most 79 + 47 = 126. Positions stay below 128
  because a float32 angle p * w_k carries an error of about p * 7.5e-8 however it is computed: two correct
  float32 programs then agree to well within the tolerance (1e-4), while every mistake is far outside it.
  offset = 0 shows nothing of the offset mistakes; the others do.
"""

from hypothesis import strategies as st

SEQ_LENS = [3, 1, 2, 5, 8, 16, 33, 48]
D_MODELS = [4, 2, 6, 8, 10, 16, 64, 128]
OFFSETS = [0, 1, 3, 17, 64, 79]
MAX_POSITION = max(OFFSETS) + max(SEQ_LENS) - 1  # 126


@st.composite
def _case(draw):
    T = draw(st.sampled_from(SEQ_LENS))
    d_model = draw(st.sampled_from(D_MODELS))
    offset = draw(st.sampled_from(OFFSETS))
    return {"seed": 0, "T": T, "d_model": d_model, "offset": offset}


def inputs():
    """Strategy of argument dicts {"seed", "T", "d_model", "offset"}, all Python ints."""
    return _case()
