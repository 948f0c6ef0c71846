"""Relations of location, each read alone (grader/explain/relations/locations.py): NaN, inf or wrong values
exactly where an input explains them, or in a pattern of the output."""

from __future__ import annotations

import numpy as np
import pytest

from grader.explain import ids
from grader.explain.relations import locations
from grader.explain.relations.common import outputs

TOL = {"rtol": 1e-5, "atol": 1e-6}
X = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)


def rms(x, eps, dtype=np.float32):
    x = np.asarray(x, dtype)
    with np.errstate(all="ignore"):
        return (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + dtype(eps))).astype(np.float32)


@pytest.fixture(autouse=True)
def quiet_arithmetic():
    """As diagnose runs every relation: the learner's output may overflow anywhere."""
    with np.errstate(all="ignore"):
        yield


def read(expected, actual, args):
    return outputs(expected, actual, args, **TOL)


def test_nan_on_the_rows_where_an_input_is_zero_names_those_rows():
    x = X.copy()
    x[[1, 3]] = 0
    found = locations.nonfinite(read(rms(x, 1e-6), rms(x, 0.0), {"x": x}))
    assert found.id == ids.NONFINITE and "where x is all zeros (rows 1 and 3)" in found.message


def test_nan_in_a_pattern_of_the_output_alone_is_named_by_the_pattern():
    expected = np.ones((4, 4), np.float32)
    actual = expected.copy()
    actual[np.triu_indices(4, 1)] = np.nan
    assert "exactly above the diagonal" in locations.nonfinite(read(expected, actual, {})).message
    actual[0, 0] = 5.0  # a finite value wrong as well: NaN is not the whole story
    assert locations.nonfinite(read(expected, actual, {})) is None


def test_rows_wrong_exactly_where_squares_overflow_are_overflow():
    x = X.copy()
    x[2] *= np.float32(3e19)
    found = locations.overflow_rows(read(rms(x, 1e-6, np.float64), rms(x, 1e-6), {"x": x}))
    assert found.diagnosis.id == ids.OVERFLOW and "(row 2)" in found.diagnosis.message
    assert locations.overflow_rows(read(rms(X, 1e-6), rms(X, 1e-6) * 2, {"x": X})) is None
