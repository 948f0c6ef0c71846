"""`grade` as a command (grader/commands/graded.py): its command lines, and why a run has no verdict. The
runs themselves are tested where they are used (tests/instructor/test_batch.py, tests/commands/test_notebook.py)."""

from pathlib import Path

from grader.commands import graded
from grader.core.launch import python_command
from grader.core.verdict_report import Report
from grader.core.verdict import Status


def test_a_grading_command_line_asks_for_one_json_object():
    argv = graded.grade_argv("rel_shift", Path("/s/ann.py"), "--time-limit", "5", program=["grade"])
    assert argv == ["grade", "rel_shift", "--file", "/s/ann.py", "--json", "--time-limit", "5"]
    assert graded.command("check", "rel_shift", "--json") == [*python_command("grader.cli"), "check", "rel_shift", "--json"]


def finished(**changes) -> graded.Finished:
    return graded.Finished(**{"returncode": 1, "stdout": b"", "stderr": b"", "seconds": 2.0, **changes})


def test_a_run_without_a_verdict_says_why_in_one_sentence():
    assert graded.Graded(None, finished(returncode=None, timed_out=True, seconds=30.4)).why_not() == \
        "grading did not end within 30 s"
    assert graded.Graded(None, finished(returncode=None, interrupted=True)).why_not() == "grading was stopped"
    broke = graded.Graded(None, finished(returncode=3, stderr=b"Traceback ...\nKeyError: 'x'\n"))
    assert broke.why_not() == "grade ended without a verdict (exit status 3): KeyError: 'x'"
    assert broke.why_not(said=False) == "grade ended without a verdict (exit status 3)"
    usage = graded.Graded(Report.not_graded("rel_shift", Status.ERROR, "no file at x.py"), finished(returncode=2))
    assert not usage.graded and usage.why_not() == "grade: no file at x.py"
    assert graded.Graded(Report("rel_shift", Status.FAIL, "1 of 4 values differ"), finished()).graded
