"""The string argument kind end to end, on rope_scaled_angles's `method` (`"str:linear|ntk|dynamic|llama3"`):
a case file, a replay or an example that names another method is refused in one sentence that names the four
(exit 2, no traceback); a failing grade's counterexample carries its method, in the JSON report and in the
case it saves, and replaying that case grades that method again.

Every test works in a temporary checkout holding a copy of the problem, so that the cases a grade saves land
in that copy's .grade/cases, never in the real checkout's.
"""

import json
import shlex
import shutil

import pytest

from conftest import ROOT
from grader.problem import problems

SLUG = "rope_scaled_angles"
METHODS = ("linear", "ntk", "dynamic", "llama3")
CASE = {"seed": 0, "T": 4, "head_dim": 8, "base": 10000.0, "factor": 2.0, "original_max_len": 2, "method": "dynamic"}
WRONG = ROOT / "tests" / "submissions" / SLUG / "dynamic_always_scaled.py"  # dynamic as static NTK


@pytest.fixture
def checkout(tmp_path):
    """A temporary checkout holding a copy of rope_scaled_angles (statement, stub, reference and the rest)."""
    root = tmp_path / "checkout"
    for side in ("problems", "solutions"):
        shutil.copytree(ROOT / side / SLUG, root / side / SLUG)
    return root


def case_file(folder, **changes):
    path = folder / "case.json"
    path.write_text(json.dumps({"problem": SLUG, "args": {**CASE, **changes}}))
    return path


def assert_one_sentence_naming_the_methods(err, got):
    line = err.strip()
    assert line and "\n" not in line and "Traceback" not in line and 'File "' not in line, err
    assert "method" in line and repr(got) in line and all(repr(m) in line for m in METHODS), line


def saved_cases(root):
    folder = root / ".grade" / "cases"
    return sorted(p.name for p in folder.glob(f"{SLUG}-*.json")) if folder.is_dir() else []


# -- refused, naming the methods --------------------------------------------------------------------------------

@pytest.mark.grading  # `grade` starts its zygote before it reads the case
@pytest.mark.parametrize("command", [(), ("--file", "solutions/rope_scaled_angles/rope_scaled_angles.py"),
                                     ("--json",)], ids=["stub", "file", "json"])
def test_a_replay_with_an_unknown_method_is_one_sentence_naming_the_four(grade, checkout, command):
    code, out, err = grade(SLUG, *command, "--replay", case_file(checkout, method="yarn"), cwd=checkout)
    assert code == 2
    if "--json" in command:  # the sentence is the report's message, stdout one JSON document
        report = json.loads(out)
        assert (report["status"], report["examples_run"]) == ("error", 0)
        assert_one_sentence_naming_the_methods(report["message"], "yarn")
    else:
        assert out == ""
        assert_one_sentence_naming_the_methods(err, "yarn")
    assert saved_cases(checkout) == []


def test_debug_refuses_an_unknown_method_too(grade, checkout):
    code, _, err = grade("debug", SLUG, "--replay", case_file(checkout, method="Linear"), cwd=checkout)
    assert code == 2
    assert_one_sentence_naming_the_methods(err, "Linear")  # the comparison is exact: no case folding


@pytest.mark.grading
def test_a_method_that_is_no_string_is_refused(grade, checkout):
    code, _, err = grade(SLUG, "--replay", case_file(checkout, method=3), cwd=checkout)
    assert code == 2 and "\n" not in err.strip() and "Traceback" not in err
    assert "method" in err and "must be a string" in err


def test_an_example_with_an_unknown_method_is_refused_naming_the_file_and_the_four(checkout):
    toml = checkout / "problems" / SLUG / "problem.toml"
    text = toml.read_text()
    assert 'method = "linear" }' in text
    toml.write_text(text.replace('method = "linear" }', 'method = "yarn" }', 1))
    with pytest.raises(problems.ProblemError) as info:
        problems.load(checkout, SLUG)
    message = str(info.value)
    assert message.startswith(f"problems/{SLUG}/problem.toml: ") and "examples[0].args.method" in message
    assert "\n" not in message and all(repr(m) in message for m in METHODS)


def test_every_method_is_taken_and_kept_as_itself():
    problem = problems.load(ROOT, SLUG)
    for method in METHODS:
        assert problem.check_args({**CASE, "method": method})["method"] == method


# -- a failing grade's case carries its method ------------------------------------------------------------------

@pytest.mark.grading
def test_a_failing_grade_saves_its_method_and_its_replay_grades_that_method(grade, checkout, tmp_path):
    before = saved_cases(ROOT)
    wrong = tmp_path / f"{SLUG}.py"
    shutil.copy(WRONG, wrong)
    code, out, _ = grade(SLUG, "--json", "--file", wrong, cwd=checkout)
    report = json.loads(out)
    assert (code, report["status"], report["pitfall"]["id"]) == (1, "fail", "dynamic_as_static")
    cx = report["counterexample"]
    assert cx["inputs"]["method"] == "dynamic" and "method='dynamic'" in cx["call"]
    words = shlex.split(cx["replay"])
    saved = checkout / words[words.index("--replay") + 1]
    assert saved.parent == checkout / ".grade" / "cases" and saved.is_file()
    assert json.loads(saved.read_text())["args"]["method"] == "dynamic"
    code, out, _ = grade(SLUG, "--json", "--file", wrong, "--replay", saved, cwd=checkout)
    replayed = json.loads(out)
    assert (code, replayed["status"], replayed["examples_run"]) == (1, "fail", 1)
    assert replayed["counterexample"]["inputs"] == cx["inputs"]
    assert "method='dynamic'" in replayed["counterexample"]["call"]
    code, out, _ = grade(SLUG, "--file", checkout / "solutions" / SLUG / f"{SLUG}.py", "--replay", saved, cwd=checkout)
    assert code == 0 and "PASS" in out
    # the real checkout did not get this grading's case (other tests, running beside this one, may grade this
    # problem from the real checkout and save cases of their own there)
    assert saved.name in before or saved.name not in saved_cases(ROOT)


@pytest.mark.grading
def test_a_replay_of_each_method_grades_that_method(grade, checkout, tmp_path):
    """The same wrong file passes a replay of each method its mistake does not touch and fails dynamic's."""
    wrong = tmp_path / f"{SLUG}.py"
    shutil.copy(WRONG, wrong)
    for method in METHODS:
        code, out, _ = grade(SLUG, "--json", "--file", wrong, "--replay", case_file(tmp_path, method=method),
                             cwd=checkout)
        report = json.loads(out)
        assert report["status"] == ("fail" if method == "dynamic" else "pass"), (method, report["message"])
        if method == "dynamic":
            assert "method='dynamic'" in report["counterexample"]["call"]
