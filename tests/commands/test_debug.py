"""`grade debug` and `grader.cases.load`: a learner's own function on a saved case, in their own process."""

from __future__ import annotations

import json

import numpy as np

from conftest import REFERENCE, ROOT
from grader import cli
from grader.problem import problems
from grader.problem.cases import case_to_json


def saved(tmp_path, slug: str, args: dict) -> str:
    problem = problems.load(ROOT, slug)
    path = tmp_path / f"{slug}-case.json"
    path.write_text(json.dumps({"problem": slug, "args": case_to_json(problem, problem.check_args(args))}))
    return str(path)


def test_a_saved_case_loads_in_the_signatures_order_and_calls_a_function_here(tmp_path):
    from grader.cases import load

    case = load(saved(tmp_path, "t5_relative_pos", {"seed": 0, "T": 3, "num_buckets": 8, "max_distance": 16}), ROOT)
    assert list(case.args) == ["seed", "T", "num_buckets", "max_distance"] and case.moved is False
    seen = []
    assert case.call(lambda *args: seen.append(args) or "mine") == "mine"  # in this process: a print would show
    assert seen == [(0, 3, 8, 16)]


def test_grade_debug_prints_what_the_function_returned_and_says_it_is_no_verdict(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    case = saved(tmp_path, "t5_relative_pos", {"seed": 0, "T": 3, "num_buckets": 8, "max_distance": 16})
    code = cli.main(["debug", "t5_relative_pos", "--replay", case, "--file", str(REFERENCE["t5_relative_pos"])])
    out = capsys.readouterr().out
    assert code == 0 and "no verdict" in out and "(9,)" in out, out


def test_grade_debug_refuses_another_problems_case(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    case = saved(tmp_path, "t5_relative_pos", {"seed": 0, "T": 3, "num_buckets": 8, "max_distance": 16})
    assert cli.main(["debug", "rmsnorm", "--replay", case]) == 2
    assert "a case of 't5_relative_pos'" in capsys.readouterr().err


def test_a_case_run_with_parameters_moved_moves_them_here_too(tmp_path):
    """rmsnorm's gain starts at ones: only with it moved does the output differ from the plain norm."""
    import importlib.util

    from grader.cases import load
    from grader.core import kinds

    problem = problems.load(ROOT, "rmsnorm")
    args = problem.check_args({"seed": 0, "x": np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3), "eps": 1e-6})
    path = tmp_path / "moved.json"
    path.write_text(json.dumps({"problem": "rmsnorm", "args": case_to_json(problem, kinds.with_moved(args, True))}))
    case = load(path, ROOT)
    spec = importlib.util.spec_from_file_location("reference_rmsnorm", REFERENCE["rmsnorm"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    plain = load(saved(tmp_path, "rmsnorm", args), ROOT).call(module.rmsnorm)
    assert case.moved is True and not np.allclose(case.call(module.rmsnorm), plain)
