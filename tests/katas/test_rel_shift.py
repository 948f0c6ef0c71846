"""rel_shift: the reference is the definition, the generated inputs are what the statement promises, the
properties hold on the reference and speak up on the source chapter's shift, which is right only for T = 1.

In-process and quick: nothing here starts a worker (`grade check rel_shift`, run by tests/instructor/test_check.py,
covers the variants and alternatives through the grader).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conftest import ROOT
from grader.problem import problems

PROBLEM = problems.load(ROOT, "rel_shift")
REFERENCE = problems.load_module(PROBLEM.reference, "rel_shift_reference_under_test").rel_shift
PROPERTIES = PROBLEM.properties().PROPERTIES


def definition(x):
    """(T, T): out[i, j] = x[i, j - i + T - 1], by plain loops."""
    T = x.shape[0]
    return np.array([[x[i, j - i + T - 1] for j in range(T)] for i in range(T)], dtype=np.float32)


def random_x(T, seed=0):
    return np.random.default_rng(seed).standard_normal((T, 2 * T - 1)).astype(np.float32) * 1e3


def variant(name):
    path = PROBLEM.variants("pitfalls")[name]
    return problems.load_module(path, f"rel_shift_{name}_under_test").rel_shift


@pytest.mark.parametrize("T", [1, 2, 3, 5, 8, 13])
def test_the_reference_is_the_definition(T):
    x = random_x(T, seed=T)
    out = np.asarray(REFERENCE(0, x))
    assert out.dtype == np.float32 and out.shape == (T * T,)
    assert np.array_equal(out.reshape(T, T), definition(x))


@settings(max_examples=40, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_are_as_the_statement_says(args):
    x = args["x"]
    T = x.shape[0]
    assert args["seed"] == 0
    assert T in (1, 2, 3, 4, 7, 12)
    assert x.dtype == np.float32 and x.shape == (T, 2 * T - 1)
    assert np.isfinite(x).all()
    assert np.unique(x).size == x.size  # a value in the wrong cell always shows


@pytest.mark.parametrize("T", [1, 2, 3, 7])
def test_the_properties_hold_on_the_reference(T):
    x = random_x(T)
    out = np.asarray(REFERENCE(0, x)).reshape(T, T)
    assert [check({"seed": 0, "x": x}, out) for check in PROPERTIES] == [None] * len(PROPERTIES)


def test_the_properties_name_the_padding_in_the_source_chapter_shift():
    x = random_x(3)
    out = np.asarray(variant("source_chapter_shift")(0, x)).reshape(3, 3)
    broken = [sentence for check in PROPERTIES if (sentence := check({"seed": 0, "x": x}, out))]
    assert broken and "padding" in broken[0]


def test_the_source_chapter_shift_is_right_only_for_a_single_position():
    shift = variant("source_chapter_shift")
    x = random_x(1)
    assert np.array_equal(np.asarray(shift(0, x)), np.asarray(REFERENCE(0, x)))
    for T in range(2, 9):
        x = random_x(T, seed=T)
        out = np.asarray(shift(0, x)).reshape(T, T)
        assert not np.array_equal(out, definition(x))
        # What its message says: column 0 holds the answer's first row.
        assert np.array_equal(out[:, 0], definition(x)[0])
