"""Reference-free properties of the layer's output, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (T, D) shape and returns None when the
property holds, or a sentence saying where it breaks.
"""

import numpy as np


def finite(args, out):
    """Every value is finite: every query sees at least itself, and a rotation cannot overflow."""
    bad = np.argwhere(~np.isfinite(out))
    if bad.size:
        i, f = (int(n) for n in bad[0])
        return (f"row i={i} holds {out[i, f]:g} at feature {f}; every value must be finite. NaN in a causal "
                "attention output usually comes from a query whose keys were all masked with -inf: query 0 "
                "sees only itself, so a mask that hides the diagonal too (j >= i instead of j > i) leaves it "
                "nothing to attend to. MASK_VALUE, the most negative float32, never gives NaN")
    return None


PROPERTIES = [finite]
