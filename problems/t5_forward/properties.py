"""Reference-free properties of the logits, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (T_dec, V) shape and returns None when
the property holds, or one sentence saying where it breaks.
"""

import numpy as np


def finite(args, out):
    """Every logit is finite."""
    bad = np.argwhere(~np.isfinite(out))
    if bad.size:
        i, v = (int(k) for k in bad[0])
        return (f"the logit at decoder position {i}, token {v} is {out[i, v]}; every logit must be finite "
                "(a row of scores with every key masked, or a log(0) cast to an integer bucket, gives NaN)")
    return None


PROPERTIES = [finite]
