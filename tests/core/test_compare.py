"""The staged comparison: each stage fails with its own message, and nothing is broadcast."""

import numpy as np

from grader.core.compare import compare

EXPECTED = np.arange(6, dtype=np.float32)


def run(actual, *, result=None, exact=True, accept_also=None, rtol=0.0, atol=0.0):
    spec = None if actual is None else {"dtype": actual.dtype.name, "shape": list(actual.shape)}
    return compare(expected_flat=EXPECTED, natural_shape=(2, 3), dtype="float32",
                   result=result or {"type": "array"}, spec=spec, actual=actual, exact=exact,
                   rtol=rtol, atol=atol, accept_also=accept_also)


def test_none_fails_the_array_stage():
    c = run(None, result={"type": "NoneType"})
    assert (c.ok, c.stage) == (False, "array")
    assert "None" in c.message


def test_unflattened_output_fails_the_shape_stage_even_with_right_values():
    c = run(EXPECTED.reshape(2, 3))
    assert (c.ok, c.stage) == (False, "shape")
    assert "reshape(-1)" in c.message


def test_broadcastable_output_is_not_broadcast():
    c = run(np.zeros(1, np.float32))
    assert (c.ok, c.stage) == (False, "shape")
    assert "1 values" in c.message


def test_wrong_dtype_fails_before_values():
    c = run(EXPECTED.astype(np.float64))
    assert (c.ok, c.stage) == (False, "dtype")


def test_nan_fails_the_finite_stage():
    bad = EXPECTED.copy()
    bad[4] = np.nan
    c = run(bad)
    assert (c.ok, c.stage, c.first) == (False, "finite", (1, 1))


def test_exact_values_report_first_and_worst_cells():
    bad = EXPECTED.copy()
    bad[1] += 1
    bad[5] += 3
    c = run(bad)
    assert (c.ok, c.count, c.first, c.worst, c.max_abs) == (False, 2, (0, 1), (1, 2), 3.0)


def test_accepted_neighbour_only_where_the_hook_allows_it():
    alt = np.full(6, np.nan)
    alt[2] = EXPECTED[2] - 1
    off_by_one_at_boundary = EXPECTED.copy()
    off_by_one_at_boundary[2] -= 1
    assert run(off_by_one_at_boundary, accept_also=alt).ok
    off_by_one_elsewhere = EXPECTED.copy()
    off_by_one_elsewhere[3] -= 1
    assert not run(off_by_one_elsewhere, accept_also=alt).ok


def test_tolerance_is_atol_plus_rtol_times_expected():
    close = EXPECTED + np.float32(1e-3) * EXPECTED
    assert run(close, exact=False, rtol=2e-3, atol=0.0).ok
    assert not run(close, exact=False, rtol=5e-4, atol=0.0).ok


def test_same_values_holds_the_same_infinity_and_nan_and_the_tolerance_of_finite_values():
    from grader.core.compare import same_values

    expected = np.array([1.0, -np.inf, np.inf, np.nan, 0.0], np.float32)
    actual = np.array([1.0 + 1e-7, -np.inf, -np.inf, np.nan, 1e-3], np.float32)
    assert same_values(expected, actual, rtol=1e-5, atol=1e-6).tolist() == [True, True, False, True, False]
