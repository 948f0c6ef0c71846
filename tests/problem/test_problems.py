"""A problem loaded from its folder: what its stub asks for, its shapes, its variants, and loading's errors."""

from __future__ import annotations

import ast
import shutil

import numpy as np
import pytest

from conftest import ROOT
from grader.problem import problems

STUB = '''
import flax.linen as nn


class Norm(nn.Module):
    def __call__(self, x):
        raise NotImplementedError  # TODO: normalise x

    def scale(self, x):
        raise NotImplementedError("TODO: the scale")

    def _private(self, x):
        raise NotImplementedError


class Block(nn.Module):
    def setup(self):
        raise NotImplementedError

    def __call__(self, x):
        return Norm()(x)


def bucket(x):
    raise NotImplementedError


def _hidden(x):
    raise NotImplementedError


def done(x):
    return x


def thing(seed, x):
    raise NotImplementedError
'''


@pytest.fixture
def rmsnorm(tmp_path):
    for side in ("problems", "solutions"):
        shutil.copytree(ROOT / side / "rmsnorm", tmp_path / side / "rmsnorm")
    return tmp_path


def test_the_parts_of_a_stub_are_read_without_importing_it(rmsnorm):
    problem = problems.load(rmsnorm, "rmsnorm")
    problem.stub.write_text(STUB.replace("def thing(", "def rmsnorm("))
    problem._modules.clear()
    assert problem.parts() == ["Norm", "Block"]
    assert problem.methods() == ["Norm.scale"]  # neither __call__, setup, a private method, nor a written one
    assert problem.helpers() == ["bucket"]  # neither the entry, a private function, nor a written one
    assert problem.part_names() == ["Norm", "Block", "Norm.scale", "bucket"]
    assert problem.moves_parameters


def test_a_todo_is_a_function_that_raises_not_implemented_error():
    functions = {node.name: node for node in ast.walk(ast.parse(STUB)) if isinstance(node, ast.FunctionDef)}
    assert problems.is_todo(functions["bucket"]) and problems.is_todo(functions["scale"])
    assert not problems.is_todo(functions["done"]) and not problems.is_todo(ast.parse("x = 1").body[0])


def test_the_natural_shape_splices_an_array_s_shape_and_the_flat_shape_is_its_size(rmsnorm):
    problem = problems.load(rmsnorm, "rmsnorm")
    assert problem.output_shape == ["x.shape"]
    args = {"seed": 0, "x": np.zeros((2, 3), np.float32), "eps": 1e-6}
    assert problem.natural_shape(args) == (2, 3) and problem.flat_shape(args) == (6,)


def test_a_variant_file_and_a_declared_pitfall_of_one_name_are_refused(rmsnorm):
    problem = problems.load(rmsnorm, "rmsnorm")
    declared = problem.variants("pitfalls")
    assert "bfloat16" in declared and list(declared) == sorted(declared)
    (problem.solution_folder / "pitfalls").mkdir()
    (problem.solution_folder / "pitfalls" / "bfloat16.py").write_text(declared["bfloat16"].read_text())
    with pytest.raises(problems.ProblemError, match="pitfall 'bfloat16' is also the file "
                                                    "solutions/rmsnorm/pitfalls/bfloat16.py; keep one"):
        problems.load(rmsnorm, "rmsnorm").variants("pitfalls")


def test_loading_an_unknown_problem_is_a_usage_error_with_a_guess(rmsnorm):
    with pytest.raises(problems.UsageError, match="no problem named 'rmsnrom'; did you mean rmsnorm"):
        problems.load(rmsnorm, "rmsnrom")


def test_a_problem_toml_that_is_no_toml_is_a_problem_error_naming_it(rmsnorm):
    (rmsnorm / "problems" / "rmsnorm" / "problem.toml").write_text("title = \n")
    with pytest.raises(problems.ProblemError, match="problems/rmsnorm/problem.toml is not valid TOML: "):
        problems.load(rmsnorm, "rmsnorm")


def test_an_instructor_s_module_that_raises_on_import_is_a_problem_error_with_its_line(rmsnorm):
    (rmsnorm / "problems" / "rmsnorm" / "strategies.py").write_text("import math\n\nraise RuntimeError('no')\n")
    with pytest.raises(problems.ProblemError, match=r"problems/rmsnorm/strategies.py: importing it raised "
                                                    r"RuntimeError at line 3: no"):
        problems.load(rmsnorm, "rmsnorm").strategy()
