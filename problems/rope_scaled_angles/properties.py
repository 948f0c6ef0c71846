"""Reference-free properties of a rescaled RoPE angle table, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural (T, head_dim // 2) shape and returns None when the
property holds, or a sentence saying where it breaks. Every rescaling here acts on the frequencies alone, so
the table is the positions times one row of frequencies (row 1); those frequencies are positive and fall from
the first pair to the last; the first pair's is 1 for the NTK methods and 1 / factor for linear; and
NTK-aware scaling slows the last pair by exactly its scale. The tempting variants of each formula are named
where the output is one of them.
"""

import math

import numpy as np

ATOL = 2e-6  # two cells of a float32 table, each within the tolerance (atol 1e-6, rtol 1e-5) of the exact one
RTOL = 2e-5


def _close(a, b, atol=ATOL, rtol=RTOL):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.abs(a - b) <= atol + rtol * np.maximum(np.abs(a), np.abs(b))


def _nonfinite(out):
    bad = np.argwhere(~np.isfinite(out))
    if not bad.size:
        return None
    p, k = (int(x) for x in bad[0])
    return (f"position {p}, pair {k} holds {out[p, k]}; every angle is a position times a finite frequency, "
            "always finite (a base of 0 or below, from a scale alpha of 0 or below, gives infinities and NaN)")


def plain(head_dim, base):
    """(head_dim // 2,) float64: RoPE's frequencies w_k = base ** (-2k / head_dim)."""
    return float(base) ** (-2.0 * np.arange(head_dim // 2) / head_dim)


def dynamic_alpha(factor, T, L):
    """Dynamic NTK's scale for a length-T sequence trained at L: 1 while T <= L."""
    return max(1.0, factor * T / L - (factor - 1.0))


def llama3_first(factor, L, wavelength=2.0 * math.pi):
    """llama3's frequency for the first pair (w_0 = 1, wavelength 2 pi), by its band."""
    if wavelength < L / 4:
        return 1.0, "kept (its wavelength 2 pi is below L / 4)"
    if wavelength > L:
        return 1.0 / factor, "divided by the factor (its wavelength 2 pi is above L)"
    g = (L / wavelength - 1.0) / 3.0
    return (1.0 - g) / factor + g, f"blended with g = (L / (2 pi) - 1) / 3 = {g:.4g}"


def linear_in_position(args, out):
    """theta[p, k] = p * theta[1, k]: position 0 is all zeros and every row is its position times row 1 (the
    rescalings act on the frequencies, never on the positions' spacing)."""
    said = _nonfinite(out)
    if said:
        return said
    T = out.shape[0]
    zero = np.flatnonzero(~_close(out[0], 0.0))
    if zero.size:
        k = int(zero[0])
        if T >= 2 and np.all(_close(out[1], 2 * out[0])):
            return (f"position 0's pair {k} holds {out[0, k]:.6g}, and row 1 is twice row 0: the rows follow "
                    "positions 1 .. T, where they are 0 .. T - 1 (position 0 turns by no angle at all)")
        return (f"position 0's pair {k} holds {out[0, k]:.6g}; position 0 is turned by no angle under every "
                "rescaling, so its row is all zeros")
    for p in range(2, T):
        bad = np.flatnonzero(~_close(out[p], p * out[1].astype(np.float64)))
        if bad.size:
            k = int(bad[0])
            return (f"position {p}, pair {k} holds {out[p, k]:.6g}, but {p} times position 1's angle is "
                    f"{p * float(out[1, k]):.6g}: the angle is not proportional to the position (every method here "
                    "rescales the frequencies, the same for every position)")
    return None


def frequencies_decrease(args, out):
    """theta[1, k], pair k's frequency, is positive and does not increase from one pair to the next."""
    if out.shape[0] < 2 or _nonfinite(out):
        return None
    w = out[1].astype(np.float64)
    bad = np.flatnonzero(w <= 0)
    if bad.size:
        k = int(bad[0])
        return (f"pair {k}'s angle at position 1 is {w[k]:.6g}; every frequency is positive (a base above 1 "
                "raised to a negative power, divided or blended by positive numbers)")
    for k in range(len(w) - 1):
        if w[k + 1] > w[k] and not _close(w[k + 1], w[k]):
            tail = ""
            if args.get("method") == "llama3":
                tail = ("; under llama3 the fast pairs are kept and the slow ones divided, never the other way "
                        "round, so the frequencies keep falling")
            return (f"pair {k + 1}'s angle at position 1 is {w[k + 1]:.6g}, more than pair {k}'s {w[k]:.6g}: "
                    f"the frequencies must fall from the first pair to the last{tail}")
    return None


def highest_frequency(args, out):
    """theta[1, 0], the first pair's frequency: 1 / factor for linear, 1 for ntk and dynamic (w_0 = 1 for any
    base), and for llama3 whatever its band makes of 1 (kept, divided or blended)."""
    if out.shape[0] < 2 or _nonfinite(out):
        return None
    got = float(out[1, 0])
    s, method, L = float(args["factor"]), args["method"], args["original_max_len"]
    if method == "linear":
        want, why = 1.0 / s, "linear divides every frequency by the factor, the first (1 radian per position) too"
    elif method in ("ntk", "dynamic"):
        want, why = 1.0, "a larger base leaves the first pair, base ** 0 = 1, as it is"
    else:
        want, band = llama3_first(s, L)
        why = f"llama3's first pair, wavelength 2 pi, is {band}"
    if _close(got, want):
        return None
    said = f"pair 0's angle at position 1 is {got:.6g}, where {why}: {want:.6g}"
    if s != 1 and _close(got, want * s * s) and method == "linear":
        return said + "; yours is the factor itself: the frequencies are multiplied by the factor, not divided"
    if s != 1 and _close(got, 1.0 / s) and method == "ntk":
        return (said + "; yours is 1 / factor: the positions (or the frequencies) are divided by the factor on "
                       "top of NTK's larger base, two rescalings where the method is one")
    if s != 1 and method == "llama3" and _close(got * s, want) and want == 1.0:
        return said + "; yours is divided by the factor: the high-frequency band is kept, never divided"
    if method == "llama3" and _close(got, llama3_first(s, L, wavelength=1.0)[0]):
        return (said + "; yours is what the bands give a wavelength of 1 / w, positions per radian: a wavelength "
                       "is positions per full turn, 2 pi / w")
    return said


def ntk_lowest_frequency(args, out):
    """For ntk, theta[1, last] is the last pair's plain frequency divided by the factor exactly, and for dynamic
    divided by alpha = max(1, factor * T / L - (factor - 1)): NTK-aware scaling picks its base for that."""
    method = args["method"]
    if method not in ("ntk", "dynamic") or out.shape[0] < 2 or _nonfinite(out):
        return None
    d, base, s = args["head_dim"], float(args["base"]), float(args["factor"])
    T, L = out.shape[0], args["original_max_len"]
    w_last = plain(d, base)[-1]
    got = float(out[1, -1])
    scale = s if method == "ntk" else dynamic_alpha(s, T, L)
    want = w_last / scale
    if _close(got, want):
        return None
    k = d // 2 - 1
    if method == "ntk":
        said = (f"the last pair's (k = {k}) angle at position 1 is {got:.6g}; NTK-aware scaling raises the base "
                f"so that this pair is slowed by exactly the factor: {w_last:.6g} / {s:g} = {want:.6g}")
    else:
        said = (f"the last pair's (k = {k}) angle at position 1 is {got:.6g}; dynamic NTK slows it by exactly "
                f"alpha = max(1, factor * T / L - (factor - 1)) = {scale:.6g} here: {want:.6g}")
    named = [
        (w_last / scale ** ((d - 2) / d), "the base times the scale, without the exponent d / (d - 2)"),
        (w_last / scale ** ((d - 2) ** 2 / d ** 2), "the base times the scale ** ((d - 2) / d), the exponent upside down"),
        (w_last * scale, "the base divided by the scale ** (d / (d - 2)) instead of multiplied"),
    ]
    if method == "ntk":
        named.append((w_last / s ** 2, "NTK's base and the positions divided by the factor as well"))
    else:
        named += [
            (w_last / dynamic_alpha(s, T - 1, L), "alpha computed from the last position T - 1 instead of the length T"),
            (w_last / s, "alpha = factor whatever the length: static NTK, not dynamic"),
        ]
        if T > L:
            named.append((w_last / (s * T / L), "alpha = factor * T / L, without the - (factor - 1) that makes it "
                                                "start from 1 at T = L"))
        if T < L:
            alpha = s * T / L - (s - 1.0)
            named.append((w_last / alpha if alpha > 0 else np.nan,
                          f"alpha = factor * T / L - (factor - 1) = {alpha:.6g} below the trained length, where "
                          "dynamic NTK keeps alpha = 1 (seq_len = max(T, L))"))
    for value, words in named:
        if np.isfinite(value) and not _close(value, want) and _close(got, value):
            return f"{said}; yours is {words}"
    return said


PROPERTIES = [linear_in_position, frequencies_decrease, highest_frequency, ntk_lowest_frequency]
