"""grader.core.launch: every grading process is an isolated interpreter that imports this grader."""

import json
import subprocess
import sys

import pytest

from grader.core import launch


def test_the_command_is_an_isolated_unbuffered_interpreter_running_this_file():
    assert launch.python_command("grader.cli") == [sys.executable, "-I", "-B", "-u", launch.HERE, "grader.cli"]


@pytest.mark.grading  # starts an interpreter
def test_the_process_imports_this_grader_and_nothing_from_the_folder_or_pythonpath(tmp_path):
    (tmp_path / "grader").mkdir()
    (tmp_path / "grader" / "__init__.py").write_text("raise SystemExit('the folder grader was imported')\n")
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("raise SystemExit('the folder json was imported')\n")
    done = subprocess.run(launch.python_command("json.tool"), cwd=tmp_path, input='{"a": [1]}',
                          capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"a": [1]}
