"""The two outputs as every relation reads them: in float64, with the tolerance, and what mismatches."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.core.verdict import Diagnosis

F32_EPS = float(np.finfo(np.float32).eps)  # 1.19e-7
SLACK_ULPS = 8  # float32 rounding allowed on top of the tolerance, relative to the array's scale


def numeric(x: np.ndarray) -> bool:
    return np.issubdtype(x.dtype, np.number) and not np.issubdtype(x.dtype, np.complexfloating)


@dataclass
class Args:
    ints: dict  # name -> int
    arrays: dict  # name -> float64 ndarray (ndim >= 1)


def arrays_and_ints(args) -> Args:
    ints, arrays = {}, {}
    for name, v in dict(args or {}).items():
        if isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, (int, np.integer)):
            ints[str(name)] = int(v)
        elif isinstance(v, (np.ndarray, list, tuple)):
            try:
                arr = np.asarray(v)
            except (TypeError, ValueError):
                continue
            if arr.ndim >= 1 and arr.size and numeric(arr):
                arrays[str(name)] = arr.astype(np.float64)
    return Args(ints, arrays)


class Ctx:
    """The two outputs in float64, the tolerance, and what mismatches."""

    def __init__(self, e, a, a_dtype, args: Args, rtol, atol, exact):
        self.e, self.a, self.a_dtype, self.args = e, a, a_dtype, args
        self.rtol, self.atol, self.exact = rtol, atol, exact
        self.shape, self.ndim, self.n = e.shape, e.ndim, e.size
        self.scale = float(np.abs(e).max())
        self.slack = 0.0 if exact else SLACK_ULPS * F32_EPS * self.scale
        self.mism = ~(np.abs(a - e) <= atol + rtol * np.abs(e)) if not exact else ~(a == e)

    def close(self, x, ref):
        """Elementwise: ``x`` equals ``ref`` within the tolerance, loosened a little for float32 rounding."""
        if self.exact:
            return x == ref
        return np.abs(x - ref) <= self.atol + self.rtol * np.abs(ref) + self.slack

    def close_all(self, x, ref) -> bool:
        return bool(np.all(self.close(x, ref)))


@dataclass
class Found:
    """A relation that fits every mismatching value, and what tells it from the others that fit too."""

    diagnosis: Diagnosis | None  # None: two readings of the same kind fit, so the kind says nothing
    axis: int | None = None
    wraps: bool = False  # a shift with wrap-around is also a permutation of that axis
    kind: str = ""  # "flatten" for the flattening-order reading of wrong_order, "multiset" for the general one


def outputs(expected, actual, args: dict, *, rtol: float, atol: float, exact: bool = False) -> Ctx | None:
    """The reference's and the learner's output (``expected`` finite, ``actual`` possibly not, of one shape)
    as every relation reads them, with the call's ``args``; None where no relation can be read from them: not
    arrays of numbers of one shape, empty, or ``expected`` not finite. Call it under ``np.errstate(all=
    "ignore")``: ``actual`` may hold anything."""
    try:
        e_in = np.asarray(expected)
        a_in = np.asarray(actual)
    except (TypeError, ValueError):
        return None
    if e_in.shape != a_in.shape or e_in.size == 0:
        return None
    if not (numeric(e_in) and numeric(a_in)):
        return None
    e = e_in.astype(np.float64)
    a = a_in.astype(np.float64)
    if not np.isfinite(e).all():
        return None
    return Ctx(e, a, a_in.dtype, arrays_and_ints(args), float(rtol), float(atol), bool(exact))


def as_rows(x: np.ndarray) -> np.ndarray:
    """(rows, values) view over the last axis (one row for 0-D and 1-D)."""
    return x.reshape(1, -1) if x.ndim <= 1 else x.reshape(-1, x.shape[-1])
