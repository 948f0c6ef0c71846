"""The language of output.shape: what it computes, and what it refuses before any input exists."""

from __future__ import annotations

import numpy as np
import pytest

from grader.problem.errors import ProblemError
from grader.problem.shapes import check_shape_expression, evaluate_shape, splices

ARGS = {"T": "int", "x": "array:float32", "eps": "float", "ids": "array:int32"}
VALUES = {"T": 3, "x": np.zeros((2, 5), np.float32), "eps": 1e-6, "ids": np.arange(4, dtype=np.int32)}


@pytest.mark.parametrize("expr, value", [
    ("T", 3), ("7", 7), ("T * 2 + 1", 7), ("(T + 1) // 2", 2), ("T - 1", 2),
    ("len(ids)", 4), ("x.size", 10), ("x.shape", (2, 5)), ("len(x) * T", 6),
])
def test_a_good_expression_is_accepted_and_computed(expr, value):
    check_shape_expression(expr, ARGS, "problems/p/problem.toml")
    assert evaluate_shape(expr, VALUES) == value


@pytest.mark.parametrize("expr, says", [
    ("y", "names 'y', which is not an argument"),
    ("eps", "uses 'eps' (float) as an int"),
    ("len(T)", "uses 'T' (int) as an array"),
    ("x", "uses 'x' (array:float32) as an int"),
    ("T / 2", "is not allowed"),
    ("T ** 2", "is not allowed"),
    ("abs(T)", "is not allowed"),
    ("2.5", "is not allowed"),
    ("x.ndim", "is not allowed"),
    ("T +", "is not an expression"),
])
def test_a_bad_expression_is_refused_naming_the_file_and_the_entry(expr, says):
    with pytest.raises(ProblemError) as info:
        check_shape_expression(expr, ARGS, "problems/p/problem.toml")
    assert str(info.value).startswith(f"problems/p/problem.toml: output.shape entry {expr!r} ")
    assert says in str(info.value)


def test_evaluating_what_the_check_would_refuse_is_an_error_too():
    with pytest.raises(ProblemError, match="is not allowed"):
        evaluate_shape("T ** 2", VALUES)


def test_only_a_shape_entry_splices():
    assert splices(["x.shape"]) and splices(["T", "x.shape"])
    assert not splices(["T", "x.size", "len(x)"])
