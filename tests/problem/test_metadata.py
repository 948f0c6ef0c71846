"""problem.toml's reader: the fields a problem is made of, each checked, and an error that names the key.

Every mistake an instructor can make in a real problem.toml is in tests/instructor/test_instructor_input.py;
these read plain tables."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT
from grader.problem import metadata, problems
from grader.problem.errors import ProblemError

META = {"title": "Add", "entry": "add", "args": {"seed": "int", "x": "array:float32"},
        "output": {"dtype": "float32", "shape": ["x.shape"]}, "tolerance": {"rtol": 1e-5, "atol": 1e-6}}


def read(meta: dict) -> dict:
    return metadata.fields(metadata.TomlReader("add", meta), "add")


def error(meta: dict) -> str:
    with pytest.raises(ProblemError) as info:
        problems.from_metadata(ROOT, "add", meta)
    return str(info.value)


def test_the_fields_of_a_minimal_problem_toml_and_their_defaults():
    fields = read(META)
    assert fields == dict(title="Add", args={"seed": "int", "x": "array:float32"}, output_dtype="float32",
                          output_shape=["x.shape"], exact=False, rtol=1e-5, atol=1e-6, call_seconds=30.0,
                          problem_seconds=120.0, memory_mib=3072, max_examples=25, axis_names=None, positions={},
                          teaches={})


def test_exact_leaves_the_tolerances_at_zero():
    fields = read({**META, "tolerance": {"exact": True}})
    assert (fields["exact"], fields["rtol"], fields["atol"]) == (True, 0.0, 0.0)


@pytest.mark.parametrize("change, says", [
    ({"titel": "Add"}, "titel is not a key problem.toml knows; the top-level keys and tables are: args,"),
    ({"title": ""}, "title must be a non-empty string, got ''"),
    ({"entry": "sum"}, "entry is 'sum'; it must equal the folder name 'add'"),
    ({"order": True}, "order must be a number (the problem's place in the learning order), got True"),
    ({"args": {"class": "int"}}, "args.class is not a Python parameter name"),
    ({"output": {"dtype": "float32"}}, "output.shape is missing"),
    ({"output": {"dtype": "float32", "shape": ["x.shape"], "size": 3}}, "output.size is not a key problem.toml knows"),
    ({"limits": {"call_seconds": float("inf")}}, "limits.call_seconds must be a positive number of seconds"),
    ({"tolerance": {"rtol": 1e-5}}, "tolerance.atol is missing; [tolerance] needs exact = true, or rtol and atol"),
    ({"hypothesis": 3}, "[hypothesis] must be a table, got 3"),
    ({"teaches": {"what": "a trick"}}, "teaches.calls is missing"),
    ({"examples": {"name": "one"}}, "examples must be a list of [[examples]] tables"),
])
def test_a_mistake_is_one_sentence_naming_the_file_and_the_key(change, says):
    said = error({**META, **change})
    assert said.startswith("problems/add/problem.toml: ") and says in said, said


def test_a_missing_table_is_named_as_a_table():
    meta = dict(META)
    del meta["tolerance"]
    assert error(meta) == "problems/add/problem.toml: [tolerance] is missing"


def test_examples_are_checked_against_the_problem_they_belong_to():
    example = {"name": "two", "args": {"seed": 0, "x": [1.0, 2.0]}, "expected": [2, 4]}
    problem = problems.from_metadata(ROOT, "add", {**META, "examples": [example]})
    [(name, args, expected)] = metadata.examples(metadata.TomlReader("add", {"examples": [example]}), problem)
    assert name == "two" and args["x"].dtype == np.float32 and expected.dtype == np.float32
    assert problem.examples[0].name == "two" and np.array_equal(problem.examples[0].expected, [2.0, 4.0])
    wrong = {**example, "expected": [1.0, 2.0, 3.0]}
    assert "examples[0].expected has shape (3,), but the output's shape is (2,)" in error({**META, "examples": [wrong]})
    missing = {"name": "two", "args": {"seed": 0}}
    assert "examples[0].args.x is missing; the arguments are seed, x" in error({**META, "examples": [missing]})


def test_output_axes_must_match_the_rank_the_examples_give():
    meta = {**META, "output": {**META["output"], "axes": ["i", "j"]},
            "examples": [{"name": "one", "args": {"seed": 0, "x": [1.0]}}]}
    assert "output.axes is ['i', 'j'], but the output of examples[0] has rank 1" in error(meta)


def test_number_is_a_finite_int_or_float_and_never_a_bool():
    assert metadata.number(3) and metadata.number(2.5)
    assert not any(metadata.number(v) for v in (True, float("nan"), float("inf"), "3", None))
