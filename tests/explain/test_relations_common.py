"""The two outputs as every relation reads them (grader/explain/relations/common.py)."""

from __future__ import annotations

import numpy as np

from grader.explain.relations.common import arrays_and_ints, as_rows, outputs


def test_only_arrays_of_numbers_of_one_shape_with_a_finite_expected_are_read():
    e = np.ones((2, 3), np.float32)
    assert outputs(e, np.ones((3, 2)), {}, rtol=0, atol=0) is None
    assert outputs(np.ones(0), np.ones(0), {}, rtol=0, atol=0) is None
    assert outputs(e, e.astype(complex), {}, rtol=0, atol=0) is None
    assert outputs(np.full((2, 3), np.nan), e, {}, rtol=0, atol=0) is None
    assert outputs(e, np.full((2, 3), np.inf), {}, rtol=0, atol=0) is not None  # the learner's may hold anything


def test_what_mismatches_is_what_the_tolerance_says():
    e = np.array([1.0, 2.0, 100.0], np.float32)
    a = np.array([1.0, 2.01, 100.05], np.float32)
    ctx = outputs(e, a, {}, rtol=1e-3, atol=0.0)
    assert ctx.mism.tolist() == [False, True, False] and ctx.a_dtype == np.float32
    assert outputs(e, a, {}, rtol=0.0, atol=0.0, exact=True).mism.tolist() == [False, True, True]
    assert ctx.close_all(e, e * np.float32(1 + 1e-7))  # float32 rounding on top of the tolerance


def test_the_arguments_kept_are_the_ints_and_the_numeric_arrays():
    args = arrays_and_ints({"seed": 0, "causal": True, "eps": 1e-6, "x": np.ones((2, 2), np.float32),
                            "names": np.array(["a"]), "empty": np.ones(0), "n": np.int64(4)})
    assert args.ints == {"seed": 0, "n": 4}
    assert list(args.arrays) == ["x"] and args.arrays["x"].dtype == np.float64


def test_rows_are_over_the_last_axis():
    assert as_rows(np.zeros((2, 3, 4))).shape == (6, 4)
    assert as_rows(np.zeros(5)).shape == (1, 5) and as_rows(np.float64(1.0)).shape == (1, 1)
