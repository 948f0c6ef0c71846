"""Relations of value, each read alone (grader/explain/relations/values.py): a constant factor and how it is
named, reduced precision, a residual added or left out. The messages' finer points, and the mistakes that
merely look like these, are tests/explain/test_relations.py's."""

from __future__ import annotations

import numpy as np

from grader.explain import ids
from grader.explain.relations import values
from grader.explain.relations.common import arrays_and_ints, outputs

RNG = np.random.default_rng(0)
E = RNG.normal(size=(4, 8)).astype(np.float32)
X = RNG.normal(size=(4, 8)).astype(np.float32)
TOL = {"rtol": 1e-5, "atol": 1e-6}


def to_bf16(x):
    b = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def test_a_factor_is_named_after_the_arguments_that_make_it():
    found = values.constant_factor(outputs(E, (E / np.float32(8 ** 0.5)).astype(np.float32), {"d_model": 8}, **TOL))
    assert found.diagnosis.id == ids.CONSTANT_FACTOR and "1/sqrt(8)" in found.diagnosis.message
    assert "d_model" in found.diagnosis.message
    assert "opposite sign" in values.constant_factor(outputs(E, -E, {}, **TOL)).diagnosis.message


def test_an_offset_is_no_factor():
    assert values.constant_factor(outputs(E, E + np.float32(0.5), {}, **TOL)) is None


def test_the_readable_forms_of_a_number_come_best_first():
    forms = values._readable_forms(0.5, arrays_and_ints({"num_heads": 2, "d_model": 8, "seed": 3}), 1e-4)
    assert forms[0][1] == "1/2" and forms[0][4] == ["num_heads"]
    assert any(text == "1/sqrt(4)" and "d_model // num_heads" in names for _, text, _, _, names in forms)


def test_values_that_are_all_bfloat16_numbers_are_reduced_precision():
    expected = (E * np.float32(1.001)).astype(np.float32)
    found = values.reduced_precision(outputs(expected, to_bf16(expected), {}, **TOL))
    assert found.diagnosis.id == ids.REDUCED_PRECISION and "exactly a bfloat16 number" in found.diagnosis.message
    assert values.reduced_precision(outputs(E, E + np.float32(1e-2), {}, **TOL)) is None  # one-sided: no rounding
    assert values.reduced_precision(outputs(E, to_bf16(E), {}, rtol=0, atol=0, exact=True)) is None


def test_a_residual_is_an_input_of_the_output_s_shape_added_or_left_out():
    added = values.input_added(outputs(E, E + X, {"x": X}, **TOL))
    missing = values.input_added(outputs(E, E - X, {"x": X}, **TOL))
    assert (added.diagnosis.id, missing.diagnosis.id) == (ids.RESIDUAL_ADDED, ids.RESIDUAL_MISSING)
    assert values.input_added(outputs(E, E + X, {"x": X[:2]}, **TOL)) is None  # another shape
