"""grader.core.exits: exit statuses and the one way a command says it was asked something wrong."""

from grader.core.exits import Exit, usage_error


def test_the_statuses_are_the_documented_numbers():
    assert (Exit.OK, Exit.FAILED, Exit.USAGE, Exit.INTERRUPTED) == (0, 1, 2, 130)


def test_a_usage_error_is_one_line_on_stderr_named_by_its_program(capsys):
    assert usage_error("no problem named 'x'") == Exit.USAGE
    assert usage_error("stopped", program="grade batch", code=Exit.FAILED) == Exit.FAILED
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "grade: no problem named 'x'\ngrade batch: stopped\n"
