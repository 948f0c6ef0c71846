"""Exercism's and Gradescope's results made from real verdicts of the command line (grader/render/formats.py),
and the Gradescope autograder (grader/instructor/gradescope.py): the zip `grade gradescope` writes, its setup.sh,
and its run_autograder run on a fake /autograder tree.

Every grading here runs at once, in the background, as soon as the first test asks for one (the
module's fixture): they mostly wait on process starts and time limits."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from conftest import ROOT
from grader.core.verdict_report import SCHEMA, Report
from grader.core.verdict import Check, Diagnosis, Pitfall, Status
from grader.instructor import gradescope
from grader.render import formats, text
from grader.sandbox import zygote

GRADE = Path(sys.executable).with_name("grade")
PROBLEMS = ["rel_shift", "t5_relative_pos", "t5_causal_relative_pos"]  # correct, wrong, missing below
EXERCISM_TEST_KEYS = {"name", "status", "message", "output", "test_code", "task_id"}
GRADESCOPE_TEST_KEYS = {"name", "score", "max_score", "status", "output", "visibility"}


def reference(slug: str) -> str:
    return (ROOT / "solutions" / slug / f"{slug}.py").read_text()


def known_mistake(slug: str, pitfall_id: str) -> tuple[str, dict]:
    """The reference with one of its pitfalls.toml entries applied, and that entry."""
    entry = next(p for p in tomllib.loads((ROOT / "solutions" / slug / "pitfalls.toml").read_text())["pitfall"]
                 if p["id"] == pitfall_id)
    source = reference(slug)
    for change in entry["replace"]:
        assert change["old"] in source
        source = source.replace(change["old"], change["new"])
    return source, entry


FLOOD_LINE = "printed by the learner " + "#" * 60
SUBMISSIONS = {  # name -> (source of rel_shift.py, extra grade options)
    "pass_flood": (reference("rel_shift").replace(
        "    del seed  # unused\n",
        f"    del seed  # unused\n    for _ in range(20):\n        print({FLOOD_LINE!r})\n"), []),
    "pitfall": (known_mistake("rel_shift", "pad_wrong_side")[0], []),
    "error": ("def rel_shift(seed, x):\n    raise ValueError('boom from the learner')\n", []),
    "timeout_after_pass": (reference("rel_shift").replace(  # the first example passes, the second (T = 1) never returns
        "    del seed  # unused\n",
        "    del seed  # unused\n    if x.shape[0] == 1:\n        while True:\n            pass\n"),
        ["--call-time-limit", "3"]),
    "not_started": ((ROOT / "problems" / "rel_shift" / "rel_shift.py").read_text(), []),
}


def build(*argv, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([str(GRADE), "gradescope", *map(str, argv)], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every grading of this file, started together: ``verdicts`` (name -> the object `grade --json` printed),
    ``reports`` (name -> that object read as a Report),
    ``folders`` (name -> the submission's folder), and the autograder's run on a fake /autograder tree. Every
    test using it is marked `grading`: the fast lane's guard, set up for each test, comes after it."""
    base = tmp_path_factory.mktemp("formats")
    started, folders = {}, {}
    for name, (source, options) in SUBMISSIONS.items():
        folder = folders[name] = base / name
        folder.mkdir()
        (folder / "rel_shift.py").write_text(source)
        command = [str(GRADE), "rel_shift", "--file", str(folder / "rel_shift.py"), "--json", *options]
        started[name] = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    zip_path = base / "autograder.zip"
    built = build(*PROBLEMS, "-o", zip_path, "--points", "2", "--visibility", "after_published")
    assert built.returncode == 0, built.stderr
    tree = base / "autograder"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(tree / "source")
    submission = tree / "submission"
    (submission / "lab").mkdir(parents=True)  # one file at the top, one in a folder, one missing
    (submission / "rel_shift.py").write_text(reference("rel_shift"))
    (submission / "lab" / "t5_relative_pos.py").write_text(
        "import jax.numpy as jnp\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n"
        "    return jnp.zeros((T * T,), jnp.int32)\n")
    cache = base / "autograder-cache"  # its own, so that the zygote it stops at the end is its own
    env = {**os.environ, "AUTOGRADER_ROOT": str(tree), "AUTOGRADER_VENV": str(GRADE.parent.parent),
           "GRADE_CACHE_DIR": str(cache)}
    autograder = subprocess.Popen(["bash", str(tree / "source" / "run_autograder")], cwd=base, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    verdicts, reports = {}, {}
    try:
        for name, process in started.items():
            out, err = process.communicate(timeout=120)
            assert out.strip(), f"grade printed nothing for {name} (exit {process.returncode}): {err[-3000:]}"
            verdicts[name], reports[name] = json.loads(out), Report.from_json(out)
            assert process.returncode == (0 if name == "pass_flood" else 1), (verdicts[name], err)
        log, _ = autograder.communicate(timeout=180)
    finally:
        for process in [*started.values(), autograder]:
            process.kill()
    return {"verdicts": verdicts, "reports": reports, "folders": folders, "zip": zip_path, "tree": tree, "log": log,
            "returncode": autograder.returncode, "cache": cache}


# -- exercism -------------------------------------------------------------------------------------------

def exercism_shape(results: dict, verdict: dict) -> None:
    """The fields of exercism's results.json version 3, one by one, against the verdict they came from."""
    assert set(results) <= {"version", "status", "message", "tests"}
    assert results["version"] == 3 and results["status"] in ("pass", "fail", "error")
    assert ("message" in results) == (results["status"] == "error")
    if "message" in results:
        assert isinstance(results["message"], str) and 0 < len(results["message"]) <= formats.MESSAGE_LIMIT
    assert [t["name"] for t in results["tests"]] == [c["name"] for c in verdict["checks"]]
    for test in results["tests"]:
        assert set(test) <= EXERCISM_TEST_KEYS and {"name", "status", "task_id"} <= set(test)
        assert test["status"] in ("pass", "fail", "error")
        assert type(test["task_id"]) is int and test["task_id"] == 1
        assert all(isinstance(test[k], str) and test[k] for k in ("message", "output", "test_code") if k in test)
        assert len(test.get("output", "")) <= formats.OUTPUT_LIMIT
    assert json.loads(json.dumps(results)) == results


@pytest.mark.grading
def test_exercism_pass_cuts_a_flood_of_printing_to_500_characters(runs):
    verdict, report = runs["verdicts"]["pass_flood"], runs["reports"]["pass_flood"]
    assert verdict["status"] == "pass" and len(verdict["output"]) > 2000
    results = formats.exercism(report)
    exercism_shape(results, verdict)
    assert results["status"] == "pass" and {t["status"] for t in results["tests"]} == {"pass"}
    assert not any("message" in t or "test_code" in t for t in results["tests"])
    output = results["tests"][0]["output"]
    assert len(output) <= 500 and output.endswith("[Output was truncated. Please limit to 500 chars]")
    assert output.startswith(FLOOD_LINE) and "second process" not in output
    assert all("output" not in t for t in results["tests"][1:])


@pytest.mark.grading
def test_exercism_fail_names_the_mistake_and_writes_the_failing_call_as_code(runs):
    verdict, report = runs["verdicts"]["pitfall"], runs["reports"]["pitfall"]
    _, entry = known_mistake("rel_shift", "pad_wrong_side")
    assert verdict["status"] == "fail" and verdict["pitfall"]["id"] == entry["id"], verdict["message"]
    results = formats.exercism(report)
    exercism_shape(results, verdict)
    assert results["status"] == "fail"
    failing = [t for t in results["tests"] if t["status"] == "fail"]
    stop = next(t for t in failing if t["name"] == verdict["counterexample"]["name"])
    assert f"Likely mistake ({entry['id']}): {entry['message']}" in stop["message"]
    assert verdict["counterexample"]["diff"]["message"] in stop["message"]
    assert "--replay" not in stop["message"]
    called = {}
    eval(stop["test_code"].split("\n", 1)[1], {"np": np, "rel_shift": lambda **kw: called.update(kw)})
    inputs = verdict["counterexample"]["inputs"]
    assert called["seed"] == inputs["seed"] and called["x"].dtype == np.float32
    assert called["x"].shape == tuple(inputs["x"]["shape"]) and called["x"].ravel().tolist() == inputs["x"]["data"]
    others = [t for t in results["tests"] if t is not stop]
    assert all(("message" in t) == (t["status"] != "pass") for t in others)


@pytest.mark.grading
def test_exercism_error_when_no_test_returned_a_value(runs):
    verdict, report = runs["verdicts"]["error"], runs["reports"]["error"]
    folder = str(runs["folders"]["error"])
    assert verdict["status"] == "error"
    results = formats.exercism(report)
    exercism_shape(results, verdict)
    assert results["status"] == "error" and {t["status"] for t in results["tests"]} == {"error"}
    assert "ValueError" in results["message"] and "boom from the learner" in results["message"]
    assert "<solution-dir>/rel_shift.py" in results["message"] and folder not in json.dumps(results)
    assert formats.exercism(report, solution_dir="/elsewhere")["message"].count(folder) >= 1


@pytest.mark.grading
def test_exercism_a_time_limit_after_a_passing_test_is_a_failed_run_with_an_erred_test(runs):
    verdict, report = runs["verdicts"]["timeout_after_pass"], runs["reports"]["timeout_after_pass"]
    assert verdict["status"] == "timeout"
    results = formats.exercism(report)
    exercism_shape(results, verdict)
    statuses = [t["status"] for t in results["tests"]]
    assert results["status"] == "fail" and statuses[0] == "pass" and "error" in statuses
    erred = results["tests"][statuses.index("error")]
    assert verdict["message"] in erred["message"] and "test_code" in erred


@pytest.mark.grading
def test_exercism_the_untouched_stub_is_an_error_saying_what_to_do(runs):
    verdict, report = runs["verdicts"]["not_started"], runs["reports"]["not_started"]
    assert verdict["status"] == "not_started"
    results = formats.exercism(report)
    exercism_shape(results, verdict)
    assert results["status"] == "error" and "NotImplementedError" in results["message"]
    assert all(t["status"] == "error" and "test_code" not in t for t in results["tests"])


def test_exercism_output_limit_at_its_boundary():
    assert formats.truncate_output("x" * 500) == "x" * 500
    cut = formats.truncate_output("y" * 501)
    assert len(cut) == 500 and cut.startswith("y" * 400) and cut.endswith(formats.TRUNCATED)


# -- Gradescope from verdicts ---------------------------------------------------------------------------

@pytest.mark.grading
def test_gradescope_scores_each_problem_all_or_nothing_with_its_checks_as_feedback(runs):
    verdicts = list(runs["verdicts"].values())
    results = formats.gradescope(list(runs["reports"].values()), 2.5, visibility="after_due_date", execution_time=12.345)
    assert results["score"] == 2.5 * sum(v["status"] == "pass" for v in verdicts)
    assert results["execution_time"] == 12.35 and results["visibility"] == "after_due_date"
    assert results["stdout_visibility"] == "hidden"
    assert {results[k] for k in ("output_format", "test_output_format", "test_name_format")} == {"text"}
    tests = iter(results["tests"])
    for verdict in verdicts:
        entry = next(tests)
        assert set(entry) == GRADESCOPE_TEST_KEYS | {"tags"} and entry["name"] == verdict["problem"]
        assert entry["max_score"] == 2.5 and entry["score"] == (2.5 if verdict["status"] == "pass" else 0.0)
        assert entry["status"] == ("passed" if entry["score"] == entry["max_score"] else "failed")
        assert entry["output"].startswith(text.HEADLINES[verdict["status"]])
        if verdict["pitfall"]:
            assert verdict["pitfall"]["message"] in entry["output"]
            assert f"mistake:{verdict['pitfall']['id']}" in entry["tags"]
        for check in verdict["checks"]:
            entry = next(tests)
            assert set(entry) == GRADESCOPE_TEST_KEYS and entry["name"] == f"{verdict['problem']}: {check['name']}"
            assert entry["score"] == entry["max_score"] == 0.0
            assert entry["status"] == ("passed" if check["status"] in ("pass", "warn") else "failed")
        assert results["output"].count(f"{verdict['problem']}: ") >= 1
    assert next(tests, None) is None
    assert all(t["visibility"] == "after_due_date" for t in results["tests"])
    assert json.loads(json.dumps(results)) == results
    flood = results["tests"][0]["output"]
    assert FLOOD_LINE in flood and len(flood.splitlines()) <= formats.PRINTED_LINES + 5


def test_gradescope_tags_what_the_verdict_names_and_says_it_where_the_run_stopped():
    checks = (Check("loading your file", Status.PASS, "loaded"),
              Check("worked examples", Status.FAIL, "differs at [0, 1]"),
              Check("generated inputs", Status.NOT_STARTED, "not run"))
    report = Report("rel_shift", Status.FAIL, "your output differs", checks=checks,
                    pitfall=Pitfall("wrong_transposed", "you transposed it"),
                    diagnosis=Diagnosis("permuted", "a permutation"))
    results = formats.gradescope([report])
    problem, loaded, examples, generated = results["tests"]
    assert problem["tags"] == ["mistake:wrong_transposed", "diagnosis:permuted"]
    assert examples["output"] == "differs at [0, 1]\nLikely mistake: wrong_transposed\nDiagnosis: permuted"
    assert (loaded["output"], generated["output"]) == ("loaded", "not run")
    assert results["extra_data"]["problems"]["rel_shift"] | {"duration_s": 0} == {
        "status": "fail", "isolation": "none", "duration_s": 0, "pitfall": "wrong_transposed",
        "diagnosis": "permuted", "first_wrong_part": None}
    passed = formats.gradescope([Report("rel_shift", Status.PASS, "all checks passed")])
    assert passed["tests"][0]["tags"] == [] and passed["extra_data"]["problems"]["rel_shift"]["pitfall"] is None


def test_gradescope_refuses_what_it_does_not_know():
    with pytest.raises(ValueError, match="visibility"):
        formats.gradescope([], visibility="sometimes")
    with pytest.raises(ValueError, match="points"):
        formats.gradescope([], 0)


def test_a_problem_nothing_graded_has_the_verdicts_shape():
    unrun = Report.not_graded("rel_shift", Status.NOT_STARTED, "Your submission has no rel_shift.py.")
    jsonschema.validate(json.loads(unrun.to_json()), SCHEMA)
    results = formats.gradescope([unrun])
    assert results["score"] == 0 and [t["name"] for t in results["tests"]] == ["rel_shift"]
    assert "no rel_shift.py" in results["tests"][0]["output"]


# -- the autograder zip ---------------------------------------------------------------------------------

@pytest.mark.grading
def test_the_zip_carries_the_scripts_at_its_root_and_the_project_for_the_named_problems(runs):
    def files(folder: Path) -> set[str]:
        return {p.relative_to(ROOT).as_posix() for p in folder.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}

    with zipfile.ZipFile(runs["zip"]) as archive:
        names = set(archive.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        config = json.loads(archive.read("gradescope.json"))
    # solutions/SECRET: what the inputs only the class's verdicts use are drawn from (made by the build)
    expected = {"setup.sh", "run_autograder", "gradescope.json", "solutions/SECRET", *gradescope.PROJECT_FILES}
    assert set(gradescope.PROJECT_FILES) == {"pyproject.toml", "requirements.lock", "README.md"}
    expected |= files(ROOT / "grader")
    for slug in PROBLEMS:
        expected |= files(ROOT / "problems" / slug) | files(ROOT / "solutions" / slug)
        expected.add(f".grade/pristine/{slug}.py")  # the untouched stub, where the autograder reads its parts
    assert names == expected
    assert not any(n.startswith(("problems/rmsnorm", "solutions/rmsnorm", ".venv", "tests/")) for n in names)
    assert all(modes[n] & stat.S_IXUSR for n in ("setup.sh", "run_autograder"))
    assert not modes["grader/cli.py"] & stat.S_IXUSR
    assert config == {"format": 1, "problems": PROBLEMS, "points": 2.0, "visibility": "after_published",
                      "run_as": "student"}


@pytest.mark.grading
def test_the_unpacked_zip_is_a_package_pip_can_install(runs, tmp_path):
    """Its metadata builds offline (the install itself needs the network Gradescope's build has): the
    grade command, the pinned dependencies, and every module of the grader."""
    done = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "egg_info",
                           "--egg-base", str(tmp_path)], cwd=runs["tree"] / "source", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    (info,) = tmp_path.glob("*.egg-info")
    pinned = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert (info / "requires.txt").read_text().split("\n[")[0].split() == pinned
    assert "grade = grader.cli:run" in (info / "entry_points.txt").read_text()
    listed = set((info / "SOURCES.txt").read_text().split())
    assert {f"grader/{p.name}" for p in (ROOT / "grader").glob("*.py")} <= listed


@pytest.mark.grading
def test_building_never_replaces_a_file_silently_and_names_unknown_problems(tmp_path):
    target = tmp_path / "autograder.zip"
    target.write_bytes(b"an instructor's file")
    refused = build("rel_shift", "-o", target)
    assert refused.returncode == 2 and refused.stdout == "" and len(refused.stderr.strip().splitlines()) == 1
    assert "--force" in refused.stderr and target.read_bytes() == b"an instructor's file"
    unknown = build("rel_shiftx", "-o", tmp_path / "other.zip")
    assert unknown.returncode == 2 and "rel_shiftx" in unknown.stderr and not (tmp_path / "other.zip").exists()
    forced = build("rel_shift", "-o", target, "--force")
    assert forced.returncode == 0 and zipfile.is_zipfile(target)
    assert list(tmp_path.iterdir()) == [target]  # no partial file left behind


@pytest.mark.grading
def test_setup_sh_parses_and_its_dry_run_shows_the_install_without_doing_it(runs, tmp_path):
    source = runs["tree"] / "source"
    for script in ("setup.sh", "run_autograder"):
        assert subprocess.run(["bash", "-n", str(source / script)]).returncode == 0
    venv = tmp_path / "venv"
    done = subprocess.run(["bash", str(source / "setup.sh"), "--dry-run"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "AUTOGRADER_ROOT": str(runs["tree"]), "AUTOGRADER_VENV": str(venv)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.endswith(f"-m venv {venv}") for line in lines)
    assert f"+ {venv}/bin/python -m pip install -q -c {source}/requirements.lock {source}" in lines
    for slug in PROBLEMS:
        assert f"+ env GRADE_WARM_SECONDS=0 {venv}/bin/grade {slug} --file solutions/{slug}/{slug}.py" in lines
    # What gives the answers away is root's alone: learner code runs as another user there.
    assert lines[-2:] == [f"+ chmod -R go-rwx {source}/solutions", f"+ chmod -R go-rwx {source}/.grade"]
    assert not venv.exists()


# -- run_autograder on a fake /autograder tree ----------------------------------------------------------

@pytest.mark.grading
def test_run_autograder_grades_each_file_and_scores_a_missing_one_zero(runs):
    assert runs["returncode"] == 0, runs["log"]
    results = json.loads((runs["tree"] / "results" / "results.json").read_text())
    scored = {t["name"]: t for t in results["tests"] if t["max_score"] > 0}
    assert list(scored) == PROBLEMS and all(t["max_score"] == 2.0 for t in scored.values())
    assert [t["score"] for t in scored.values()] == [2.0, 0.0, 0.0] and results["score"] == 2.0
    assert scored["rel_shift"]["status"] == "passed" and scored["rel_shift"]["output"].startswith("PASS")
    wrong = scored["t5_relative_pos"]["output"]
    assert wrong.startswith("FAIL") and "Called t5_relative_pos(" in wrong
    missing = scored["t5_causal_relative_pos"]
    assert missing["status"] == "failed" and "no t5_causal_relative_pos.py" in missing["output"]
    checks = [t for t in results["tests"] if t["max_score"] == 0]
    assert {t["name"].split(":")[0] for t in checks} == {"rel_shift", "t5_relative_pos"}
    assert all(t["visibility"] == "after_published" for t in results["tests"])
    assert results["visibility"] == "after_published" and results["stdout_visibility"] == "hidden"
    assert "lab/t5_relative_pos.py" in runs["log"]
    statuses = results["extra_data"]["problems"]
    assert [statuses[s]["status"] for s in PROBLEMS] == ["pass", "fail", "not_started"]
    folder = zygote.private_folder(runs["cache"])
    assert folder is None or not any(folder.iterdir())  # the zygote it started is gone


@pytest.mark.grading
def test_run_autograder_writes_results_when_grading_breaks_or_cannot_start(runs, tmp_path):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (venv / "grade").write_text("#!/bin/sh\necho 'Traceback: something broke' >&2\necho not json\nexit 3\n")
    for script in venv.iterdir():
        script.chmod(0o755)
    tree = tmp_path / "autograder"
    (tree / "results").mkdir(parents=True)
    (tree / "source").symlink_to(runs["tree"] / "source")
    (tree / "submission").symlink_to(runs["tree"] / "submission")
    results = tree / "results" / "results.json"
    env = {**os.environ, "AUTOGRADER_ROOT": str(tree), "GRADE_CACHE_DIR": str(tmp_path / "cache")}
    for venv_path, says in ((venv.parent, "could not grade this problem"), (tmp_path / "no-venv", "could not run")):
        done = subprocess.run(["bash", str(tree / "source" / "run_autograder")], capture_output=True, text=True,
                              timeout=60, env={**env, "AUTOGRADER_VENV": str(venv_path)})
        assert done.returncode == 0
        written = json.loads(results.read_text())
        assert written["score"] == 0 and says in json.dumps(written)
        assert "something broke" not in json.dumps(written)  # grade's stderr is for the instructors' log
    assert "something broke" in done.stdout or venv_path.name == "no-venv"


# -- the table of formats -------------------------------------------------------------------------------

def test_the_commands_format_choices_are_the_tables_rows():
    from grader import cli

    choices = next(a.choices for a in cli.grade_parser()._actions if a.dest == "format")
    assert list(choices) == list(formats.FORMATS) == ["text", "json", "exercism", "gradescope", "html"]
    assert [n for n, f in formats.FORMATS.items() if f.to_file] == ["exercism", "gradescope", "html"]


def test_each_format_writes_its_function_of_the_report():
    report = Report.not_graded("rel_shift", Status.ERROR, "no file at x.py")
    assert formats.FORMATS["text"].write(report) == text.render(report) == "rel_shift: ERROR - no file at x.py"
    assert formats.FORMATS["json"].write(report) == report.to_json()
    assert json.loads(formats.FORMATS["exercism"].write(report)) == formats.exercism(report)
    assert json.loads(formats.FORMATS["gradescope"].write(report)) == formats.gradescope([report])


def test_the_platforms_show_what_two_processes_printed_without_the_graders_line():
    from grader.core.verdict import SECOND_PROCESS

    report = Report("rel_shift", Status.PASS, "ok", output=f"first\n\n{SECOND_PROCESS}\nsecond\n")
    results = formats.exercism(report)
    assert results["tests"] == [] and SECOND_PROCESS not in formats.describe(report)
    assert "  | first\n  | \n  | second" in formats.describe(report)
    assert SECOND_PROCESS in text.render(report)  # the command line's report says where the second one starts
