"""The `grade` command's contract: JSON shape, exit codes, usage errors, list, replay."""

import json
import shutil

import jsonschema

from conftest import REFERENCE, ROOT
from grader import report as report_module


def test_unknown_problem_is_a_usage_error_naming_the_problems(grade):
    code, out, err = grade("t5_relative_posx")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "t5_relative_posx" in err and "rmsnorm" in err and "mini_t5_forward" in err


def test_missing_file_is_a_usage_error(grade, tmp_path):
    code, _, err = grade("rmsnorm", "--file", tmp_path / "nope.py")
    assert code == 2 and "nope.py" in err


def test_pass_json_has_the_contract_keys_and_exit_zero(grade_json):
    code, report = grade_json("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"])
    assert code == 0
    jsonschema.validate(report, report_module.SCHEMA)
    assert set(report) == set(report_module.SCHEMA["required"])
    assert report["status"] == "pass" and report["counterexample"] is None and report["pitfall"] is None
    assert report["examples_run"] > 10
    assert all({"name", "status", "message"} <= set(check) for check in report["checks"])


def test_fail_json_carries_the_counterexample_and_its_replay(grade_json, grade, tmp_path):
    wrong = tmp_path / "t5_relative_pos.py"
    wrong.write_text(REFERENCE["t5_relative_pos"].read_text().replace("max_distance / max_exact", "max_distance / (max_exact + 1)"))
    code, report = grade_json("t5_relative_pos", "--file", wrong)
    assert code == 1 and report["status"] == "fail"
    cx = report["counterexample"]
    assert {"inputs", "expected", "actual", "diff", "replay"} <= set(cx)
    assert cx["expected"] != cx["actual"]
    replay = cx["replay"].split()
    assert replay[:2] == ["grade", "t5_relative_pos"] and "--replay" in replay
    code, replayed = grade_json(*replay[1:])
    assert code == 1 and replayed["examples_run"] == 1
    assert replayed["counterexample"]["inputs"] == cx["inputs"]


def test_human_report_shows_the_matrix_in_its_natural_shape(grade, tmp_path):
    wrong = tmp_path / "t5_relative_pos.py"
    wrong.write_text(REFERENCE["t5_relative_pos"].read_text() + "\n\n_r = t5_relative_pos\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n    return _r(seed, T, num_buckets, max_distance).at[1].add(1)\n")
    code, out, _ = grade("t5_relative_pos", "--file", wrong)
    assert code == 1
    assert "FAIL" in out.splitlines()[0]
    assert "Expected (" in out and "Got:" in out and "Mismatches (x):" in out
    assert "i=0" in out and "j - i = 1" in out
    assert "Largest absolute error" in out


def test_untouched_stub_is_not_started(grade_json):
    code, report = grade_json("t5_relative_pos")
    assert (code, report["status"]) == (1, "not_started")
    assert "TODO" in report["message"]


def test_grade_works_from_a_subfolder(grade):
    code, out, _ = grade("rmsnorm", "--file", REFERENCE["rmsnorm"], cwd=ROOT / "problems" / "rmsnorm")
    assert code == 0 and "PASS" in out


def test_list_shows_every_problem_and_its_last_status(grade, tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part, checkout / part)
    code, out, _ = grade("list", cwd=checkout)
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["mini_t5_forward", "rmsnorm", "t5_relative_pos"]
    assert out.count("not graded yet") == 3
    grade("t5_relative_pos", cwd=checkout)
    _, out, _ = grade("list", cwd=checkout)
    assert "not_started" in [line for line in out.splitlines() if line.startswith("t5_relative_pos")][0]
    stub = checkout / "problems" / "t5_relative_pos" / "t5_relative_pos.py"
    stub.write_text(stub.read_text() + "\n# edited\n")
    _, out, _ = grade("list", cwd=checkout)
    assert "edited since last grade" in out


def test_json_stdout_is_one_object_even_for_usage_errors(grade):
    code, out, _ = grade("no_such_problem", "--json")
    assert code == 2
    assert json.loads(out)["status"] == "error"
