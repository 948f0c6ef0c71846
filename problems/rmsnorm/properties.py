"""Reference-free properties of RMSNorm's output, checked on a failing output to say what is off.

Each check takes the inputs and the output in the natural shape of x, and returns None when the property
holds, or a sentence saying where it breaks.
"""

import numpy as np


def unit_rms_per_row(args, out):
    """Each row of the output has root-mean-square sqrt(ms / (ms + eps)), i.e. about 1 unless eps dominates."""
    x = np.asarray(args["x"], np.float64).reshape(-1, out.shape[-1] if out.ndim else 1)
    y = np.asarray(out, np.float64).reshape(x.shape)
    ms = np.mean(x * x, axis=-1)
    want = np.sqrt(ms / (ms + args["eps"]))
    got = np.sqrt(np.mean(y * y, axis=-1))
    bad = np.abs(got - want) > 1e-3 * np.maximum(want, 1e-3)
    if bad.any():
        r = int(np.argmax(bad))
        return (f"row {r} of the output has root-mean-square {got[r]:.6g}; with gamma = 1 it should be "
                f"sqrt(ms / (ms + eps)) = {want[r]:.6g} (ms = mean of x² over that row)")
    return None


def same_sign_as_input(args, out):
    """With gamma = 1 every output value has the sign of its input value."""
    x = np.asarray(args["x"], np.float64).reshape(out.shape)
    bad = np.sign(out) != np.sign(x)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return f"at index {idx} the input is {x[idx]:.6g} but the output is {out[idx]:.6g}: the sign must not change"
    return None


PROPERTIES = [unit_rms_per_row, same_sign_as_input]
