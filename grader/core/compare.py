"""Compare one output with the reference's, in stages that stop at the first failure.

array -> size and shape -> dtype -> all finite -> values. Outputs are never broadcast: a (T, T) answer for a
flattened (T*T,) output fails the shape stage with its own message, whatever the values are.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np


class Stage(str, Enum):
    """The stage of the comparison of one output (:mod:`grader.core.compare`) that failed: its type, its size
    and shape, its dtype, whether every value is finite, the values (also the stage of a full match)."""

    ARRAY = "array"
    SHAPE = "shape"
    DTYPE = "dtype"
    FINITE = "finite"
    VALUES = "values"

    def __str__(self) -> str:
        return self.value


@dataclass
class Comparison:
    ok: bool
    stage: Stage  # the first stage that failed, or VALUES when everything passed
    message: str
    expected: np.ndarray  # natural shape
    actual: np.ndarray | None = None  # natural shape when the size and dtype allow it
    mismatch: np.ndarray | None = None  # bool, natural shape
    count: int = 0
    first: tuple | None = None
    worst: tuple | None = None
    max_abs: float = 0.0
    max_rel: float = 0.0

    def summary(self) -> dict:
        return {"stage": self.stage, "message": self.message, "mismatches": self.count,
                "first_index": list(self.first) if self.first is not None else None,
                "worst_index": list(self.worst) if self.worst is not None else None,
                "max_abs_error": self.max_abs, "max_rel_error": self.max_rel}


def same_values(expected: np.ndarray, actual: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Elementwise, for outputs that may hold non-finite values (a model's part, a known mistake's output):
    ``actual`` is ``expected`` where it is equal to it (the same infinity too), NaN where it is NaN, or within
    the tolerance of a finite expected value."""
    e64, a64 = np.asarray(expected, np.float64), np.asarray(actual, np.float64)
    with np.errstate(invalid="ignore"):
        return (a64 == e64) | (np.isnan(a64) & np.isnan(e64)) | (
            np.isfinite(e64) & (np.abs(a64 - e64) <= atol + rtol * np.abs(e64)))


def agrees(problem, args: dict, expected: np.ndarray, got: np.ndarray, accept_also: np.ndarray | None) -> bool:
    """Whether ``got`` is an acceptable answer of ``problem`` on ``args`` where ``expected`` is the
    reference's (both flat; ``accept_also``: what the problem's hook also accepts there)."""
    return compare(expected_flat=expected, natural_shape=problem.natural_shape(args), dtype=problem.output_dtype,
                   result={"type": "array"}, spec={"dtype": got.dtype.name, "shape": [got.size]},
                   actual=got.reshape(-1), exact=problem.exact, rtol=problem.rtol, atol=problem.atol,
                   accept_also=accept_also).ok


def describe_returned(result: dict) -> str:
    kind = result.get("type", "?")
    if kind in ("NoneType",):
        return "None (is a `return` missing?)"
    if kind == "list":
        return "a Python list, not an array"
    return f"a value of type {kind}" + (f" with dtype {result['dtype']}" if "dtype" in result else "")


def compare(*, expected_flat: np.ndarray, natural_shape: tuple, dtype: str, result: dict,
            spec: dict | None, actual: np.ndarray | None, exact: bool, rtol: float, atol: float,
            accept_also: np.ndarray | None = None) -> Comparison:
    """Stage-by-stage comparison of a worker's answer with the expected output.

    ``result`` is the worker's description of what came back, ``spec`` the array's dtype and shape as
    sent, ``actual`` the decoded array (None where its dtype cannot be decoded).
    """
    expected = expected_flat.reshape(natural_shape)
    n = expected_flat.size
    fail = lambda stage, message, **kw: Comparison(False, stage, message, expected, **kw)  # noqa: E731

    if result.get("type") != "array" or spec is None:
        return fail(Stage.ARRAY, f"returned {describe_returned(result)}; return a numpy or JAX array "
                                 f"of shape ({n},) and dtype {dtype}")
    shape = tuple(spec["shape"])
    got_size = int(np.prod(shape, dtype=np.int64))
    flat_hint = (f" (the {' × '.join(map(str, natural_shape))} result flattened)"
                 if len(natural_shape) > 1 else "")
    if got_size != n:
        return fail(Stage.SHAPE, f"returned {got_size} values (shape {shape}); expected {n} values, "
                                 f"shape ({n},){flat_hint}")
    if shape != (n,):
        return fail(Stage.SHAPE, f"returned shape {shape}; expected the flat shape ({n},){flat_hint}: "
                                 f"flatten it with .reshape(-1)")
    if spec["dtype"] != dtype:
        return fail(Stage.DTYPE, f"returned dtype {spec['dtype']}; expected {dtype}: cast with .astype(jnp.{dtype})")

    actual = actual.reshape(natural_shape)
    if np.issubdtype(actual.dtype, np.inexact):
        bad = ~np.isfinite(actual)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            kinds = sorted({"NaN" if np.isnan(v) else "inf" for v in actual[bad].ravel()[:1000]})
            return fail(Stage.FINITE, f"{int(bad.sum())} of {n} values are {' or '.join(kinds)} "
                                      f"(the first at index {first}); every value should be finite",
                        actual=actual, mismatch=bad, count=int(bad.sum()), first=first, worst=first)

    e64, a64 = expected.astype(np.float64), actual.astype(np.float64)
    err = np.abs(a64 - e64)
    if exact:
        good = a64 == e64
        if accept_also is not None:
            good |= a64 == accept_also.reshape(natural_shape)
        allowed = "exact"
    else:
        good = err <= atol + rtol * np.abs(e64)
        allowed = f"|actual - expected| <= {atol:g} + {rtol:g}·|expected|"
    # Where the expected value is 0, any other value is infinitely far off, relatively (never 0).
    rel = np.divide(err, np.abs(e64), out=np.where(err > 0, np.inf, 0.0), where=e64 != 0)
    bad = ~good
    count = int(bad.sum())
    stats = dict(actual=actual, mismatch=bad, count=count,
                 max_abs=float(err[bad].max()) if count else float(err.max(initial=0.0)),
                 max_rel=float(rel[bad].max()) if count else float(rel.max(initial=0.0)))
    if not count:
        return Comparison(True, Stage.VALUES, "all values match", expected, **stats)
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, err, -1.0))), natural_shape))
    return Comparison(False, Stage.VALUES, f"{count} of {n} values differ ({allowed})", expected,
                      first=first, worst=worst, **stats)
