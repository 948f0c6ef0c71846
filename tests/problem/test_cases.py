"""A case as a case file keeps it (grader/problem/cases.py): each argument in its kind's form, back the same."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import ROOT
from grader.core import kinds
from grader.problem import problems
from grader.problem.cases import case_from_json, case_to_json, save_case

RMSNORM = problems.load(ROOT, "rmsnorm")
ARGS = {"seed": 3, "x": np.arange(6, dtype=np.float32).reshape(2, 3), "eps": 1e-6}


def test_a_case_comes_back_from_json_as_it_went():
    data = json.loads(json.dumps(case_to_json(RMSNORM, ARGS)))
    back = case_from_json(RMSNORM, data)
    assert back["seed"] == 3 and back["eps"] == 1e-6
    assert back["x"].dtype == np.float32 and np.array_equal(back["x"], ARGS["x"])


def test_moved_parameters_are_kept_with_the_case():
    moved = kinds.with_moved(ARGS, ("gamma",))
    data = case_to_json(RMSNORM, moved)
    assert data[kinds.MOVED] == ["gamma"]
    assert kinds.moved(case_from_json(RMSNORM, data)) == ("gamma",)
    assert kinds.MOVED not in case_to_json(RMSNORM, ARGS)


def test_a_case_file_that_does_not_fit_names_the_argument():
    with pytest.raises(problems.ProblemError, match="argument eps is missing"):
        case_from_json(RMSNORM, {name: value for name, value in case_to_json(RMSNORM, ARGS).items() if name != "eps"})
    with pytest.raises(kinds.KindError, match="rmsnorm: argument x must be an object with 'shape' and 'data'"):
        case_from_json(RMSNORM, {"seed": 0, "x": [[1.0]], "eps": 1e-6})


def test_a_saved_case_is_named_by_its_problem_and_digest(tmp_path):
    problem = problems.Problem(**{**vars(RMSNORM), "root": tmp_path, "_modules": {}})
    path = save_case(problem, ARGS)
    assert path.parent == tmp_path / ".grade" / "cases" and path.name.startswith("rmsnorm-")
    saved = json.loads(path.read_text())
    assert saved["problem"] == "rmsnorm" and np.array_equal(case_from_json(problem, saved["args"])["x"], ARGS["x"])
