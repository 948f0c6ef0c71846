"""`grade new <slug>` (grader/instructor/new.py), in a temporary checkout: the files it writes, what it refuses,
and that what it writes is a problem the grader loads (read in this process; nothing is graded)."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from grader.commands.learner import load_hints
from grader.instructor import new
from grader.problem import problems
from grader.problem import checkout as checkout_module
from grader.problem.checkout import slugs

SLUG = "alibi_bias"
FILES = {f"problems/{SLUG}/{name}" for name in
         ("README.md", f"{SLUG}.py", "problem.toml", "strategies.py", "properties.py", "hints.toml")} | \
        {f"solutions/{SLUG}/{name}" for name in (f"{SLUG}.py", "pitfalls.toml", "alternatives/numpy_float64.py")}


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """An empty kata checkout (problems/ and solutions/), the current folder. Both folders are needed:
    without them ``find_root`` falls back on the checkout the grader is installed from."""
    for part in ("problems", "solutions"):
        (tmp_path / part).mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def written(root) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_every_file_is_listed_marked_for_its_author_and_python_that_parses():
    files = new.files(SLUG)
    assert set(files) == FILES
    for rel, text in files.items():
        assert new.MARKER in text, rel  # `grade check` lists it on its authoring row until written
        assert "{" + "slug}" not in text and "{marker}" not in text, rel  # every placeholder filled
        if rel.endswith(".py"):
            ast.parse(text, rel)
    stub = ast.parse(files[f"problems/{SLUG}/{SLUG}.py"])
    assert [f.name for f in stub.body if isinstance(f, ast.FunctionDef)] == [SLUG]


def test_new_writes_both_folders_and_says_what_it_wrote(checkout, capsys):
    assert new.main([SLUG]) == 0
    assert written(checkout) == FILES
    for rel, text in new.files(SLUG).items():
        assert (checkout / rel).read_text() == text
    out = capsys.readouterr().out
    assert out.startswith(f"Wrote a working skeleton of {SLUG}:")
    assert all(f"  {rel}\n" in out for rel in FILES) and f"grade check {SLUG}" in out


def test_new_from_inside_the_checkout_writes_at_its_root(checkout, monkeypatch):
    inside = checkout / "problems"
    monkeypatch.chdir(inside)
    assert new.main([SLUG]) == 0
    assert written(checkout) == FILES and not (inside / "problems").exists()


def test_what_new_writes_loads_as_a_problem(checkout):
    assert new.main([SLUG]) == 0
    problem = problems.load(checkout, SLUG)
    assert slugs(checkout) == [SLUG]
    assert (problem.slug, problem.args, problem.output_dtype) == (SLUG, {"seed": "int", "x": "array:float32"}, "float32")
    assert (problem.rtol, problem.atol, problem.exact, problem.max_examples) == (1e-5, 1e-6, False, 20)
    assert problem.parts() == [] and not problem.moves_parameters  # a function, not a model
    (example,) = problem.examples
    assert example.expected.shape == problem.natural_shape(example.args) == (2, 3)
    assert list(inspect.signature(problems.load_module(problem.stub, "stub").__dict__[SLUG]).parameters) == \
        list(problem.args)
    drawn = problem.validate_strategy()
    assert drawn["seed"] == 0 and drawn["x"].dtype == np.float32 and drawn["x"].ndim == 2
    finite = problem.properties().PROPERTIES[0]
    assert finite(example.args, example.expected) is None
    assert "every value must be finite" in finite(example.args, np.array([[1.0, np.nan]]))
    assert len(load_hints(problem)) == 3
    assert list(problem.variants("pitfalls")) == ["doubled"] and list(problem.variants("alternatives")) == ["numpy_float64"]


def test_the_skeletons_reference_alternative_and_pitfall_compute_what_they_say(checkout):
    assert new.main([SLUG]) == 0
    problem = problems.load(checkout, SLUG)
    (example,) = problem.examples
    run = lambda path, name: np.asarray(  # noqa: E731
        getattr(problems.load_module(path, name), SLUG)(**example.args))
    expected = example.expected.reshape(-1)  # the entry returns the natural-shape output flattened
    np.testing.assert_array_equal(run(problem.reference, "reference"), expected)
    np.testing.assert_array_equal(run(problem.variants("alternatives")["numpy_float64"], "alternative"), expected)
    np.testing.assert_array_equal(run(problem.variants("pitfalls")["doubled"], "doubled"), 2 * expected)
    with pytest.raises(NotImplementedError):
        run(problem.stub, "stub")


@pytest.mark.parametrize("slug", ["AlibiBias", "alibi-bias", "1bias", "alibi bias", "class", "lambda", ""])
def test_a_name_that_cannot_be_a_module_and_a_function_is_refused(checkout, capsys, slug):
    assert new.main([slug]) == 2
    assert "cannot be a problem's name" in capsys.readouterr().err
    assert sorted(p.relative_to(checkout).as_posix() for p in checkout.rglob("*")) == ["problems", "solutions"]


@pytest.mark.parametrize("taken", [["problems"], ["solutions"], ["problems", "solutions"]])
def test_an_existing_problem_is_never_overwritten(checkout, capsys, taken):
    for part in taken:
        (checkout / part / SLUG).mkdir()
        (checkout / part / SLUG / "notes.md").write_text("mine")
    assert new.main([SLUG]) == 2
    err = capsys.readouterr().err
    named = " and ".join(f"{part}/{SLUG}" for part in taken)
    assert f"grade: {named} already exist{'s' if len(taken) == 1 else ''}; nothing was written" in err
    assert written(checkout) == {f"{part}/{SLUG}/notes.md" for part in taken}
    assert all((checkout / part / SLUG / "notes.md").read_text() == "mine" for part in taken)


def test_outside_any_checkout_nothing_is_written(tmp_path, monkeypatch, capsys):
    def nowhere(start=None):
        raise problems.UsageError(f"no kata checkout (a folder with problems/ and solutions/) at or above {tmp_path}")

    monkeypatch.setattr(checkout_module, "find_root", nowhere)
    monkeypatch.chdir(tmp_path)
    assert new.main([SLUG]) == 2
    assert capsys.readouterr().err.startswith("grade: no kata checkout")
    assert written(tmp_path) == set()


def test_a_missing_name_is_a_usage_error(checkout, capsys):
    with pytest.raises(SystemExit) as stop:
        new.main([])
    assert stop.value.code == 2 and "slug" in capsys.readouterr().err
