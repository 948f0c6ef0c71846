"""Reference-free properties of the layer's output, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (T, D) shape and returns None when the
property holds, or a sentence saying where it breaks.
"""

import numpy as np


def finite(args, out):
    """Every value is finite: no query is left with no key to attend to, no lookup reads outside a table."""
    bad = np.argwhere(~np.isfinite(out))
    if bad.size:
        i, f = (int(n) for n in bad[0])
        return (f"row i={i} holds {out[i, f]:g} at feature {f}; every value must be finite. NaN in an attention "
                "output usually means a query whose every key was masked with -inf (query 0 under a causal mask "
                "must still see itself), or a table lookup with an index past 2k (jnp.take fills those with "
                "NaN)")
    return None


PROPERTIES = [finite]
