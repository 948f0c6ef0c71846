"""What a problem's error sentences quote: one line, short, the path as the instructor sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.problem.errors import describe, one_line, shown, shown_path


def test_one_line_is_the_first_line_that_holds_anything_cut_short():
    assert one_line("\n  \n  first line  \nsecond") == "first line"
    assert one_line("") == ""
    long = one_line("x" * 500, 50)
    assert len(long) <= 50 and long.startswith("x")


def test_a_value_is_shown_as_its_repr_on_one_line():
    assert shown("a\nb") == "'a\\nb'"
    assert shown([1, 2]) == "[1, 2]"
    assert len(shown(list(range(1000)))) <= 60


def test_a_path_is_shown_below_the_checkout_or_whole():
    root = Path("/k")
    assert shown_path(root / "problems" / "x" / "problem.toml", root) == "problems/x/problem.toml"
    assert shown_path(Path("/elsewhere/f.py"), root) == "/elsewhere/f.py"


def test_an_exception_is_described_with_the_last_line_of_the_file_it_passed_through(tmp_path):
    path = tmp_path / "strategies.py"
    path.write_text("def f():\n    raise ValueError('bad draw\\nmore')\n")
    code = compile(path.read_text(), str(path), "exec")
    namespace: dict = {}
    exec(code, namespace)
    with pytest.raises(ValueError) as info:
        namespace["f"]()
    assert describe(info.value, path) == "ValueError at line 2: bad draw"
    assert describe(info.value) == "ValueError: bad draw"
    assert describe(KeyError()) == "KeyError"
