"""How a worker describes an exception (:mod:`grader.sandbox.tracebacks`), in-process, with real exceptions raised
from learner-like files: the kind of error, the line of the graded file, and a traceback that keeps the
learner's own frames, counts the others, and stays within what the protocol keeps."""

from __future__ import annotations

import re
import types

import numpy as np
import pytest

from conftest import ROOT
from raising import JAX_DEEP, LIBRARY_RUN, raised, unfiltered  # noqa: F401  (unfiltered: a fixture)
from grader.sandbox import protocol, tracebacks, worker



def frame_lines(tb: str) -> list[str]:
    return [line for line in tb.splitlines() if line.startswith('  File "')]




def test_an_error_deep_inside_jax_keeps_every_learner_frame_and_counts_the_rest(tmp_path, unfiltered):
    import jax.numpy as jnp

    error, path = raised(tmp_path, JAX_DEEP, "entry", jnp.ones((2, 4)))
    lines = error["traceback"].splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert frame_lines(error["traceback"]) == [f'  File "{path}", line 10, in entry',
                                                        f'  File "{path}", line 6, in helper']
    assert "    return jnp.dot(y, jnp.ones((3, 5)))" in lines
    run = [line for line in lines if LIBRARY_RUN.match(line)]
    assert len(run) == 1 and "jax" in run[0] and int(run[0].split()[1]) > 3
    assert lines[-1].startswith("TypeError: dot_general requires contracting dimensions")
    assert not any("JAX has removed" in line or line.startswith("---") for line in lines)
    assert error["line"] == 6


@pytest.mark.parametrize("call, link, last", [
    ("chained", "The above exception was the direct cause of the following exception:",
     "ValueError: could not project"),
    ("during", "During handling of the above exception, another exception occurred:",
     "NameError: name 'undefined_name' is not defined"),
])
def test_each_exception_of_a_chain_keeps_its_learner_frames_and_its_line(tmp_path, unfiltered, call, link, last):
    import jax.numpy as jnp

    error, path = raised(tmp_path, JAX_DEEP, call, jnp.ones((2, 4)))
    tb = error["traceback"]
    first, second = tb.split(f"\n\n{link}\n\n")
    assert frame_lines(first)[-1] == f'  File "{path}", line 6, in helper'
    assert first.splitlines()[-1].startswith("TypeError: dot_general")
    assert second.splitlines()[0] == "Traceback (most recent call last):"
    assert frame_lines(second) == [f'  File "{path}", line {17 if call == "chained" else 24}, in {call}']
    assert second.splitlines()[-1] == last
    assert "test_tracebacks.py" not in tb  # the frames that called the learner's code say nothing


RECURSION = '''def again(n):
    return again(n + 1)


def ping(n):
    return pong(n + 1)


def pong(n):
    return ping(n + 1)


def shout(n):
    raise ValueError("\\n".join(f"line {i}" for i in range(100)))


def huge(n):
    raise ValueError("x" * 100_000)
'''


def test_a_recursion_is_counted_as_python_counts_it(tmp_path):
    error, path = raised(tmp_path, RECURSION, "again", 0)
    lines = error["traceback"].splitlines()
    assert len(frame_lines(error["traceback"])) == 3
    assert re.fullmatch(r"  \[Previous line repeated \d+ more times\]", lines[-2])
    assert lines[-1] == "RecursionError: maximum recursion depth exceeded"


def test_a_traceback_too_long_loses_frames_from_its_middle_never_its_ends(tmp_path):
    error, path = raised(tmp_path, RECURSION, "ping", 0)
    lines = error["traceback"].splitlines()
    assert len(lines) <= 60
    assert lines[:2] == ["Traceback (most recent call last):", f'  File "{path}", line 6, in ping']
    assert lines[-1] == "RecursionError: maximum recursion depth exceeded"
    cut = [i for i, line in enumerate(lines) if re.fullmatch(r"  \.\.\. \d+ lines left out \.\.\.", line)]
    assert len(cut) == 1 and lines[cut[0] + 1].startswith('  File "')  # whole frames go, no dangling carets


def test_a_long_message_is_cut_and_a_huge_line_shortened_under_what_the_protocol_keeps(tmp_path):
    error, _ = raised(tmp_path, RECURSION, "shout", 0)
    lines = error["traceback"].splitlines()
    assert "ValueError: line 0" in lines and "line 10" in lines and "line 11" not in lines
    assert lines[-1] == "  ... 89 more lines of the message ..."
    error, _ = raised(tmp_path, RECURSION, "huge", 0)
    assert len(error["traceback"]) < protocol.MAX_TEXT
    assert error["traceback"].splitlines()[-1].startswith("ValueError: xxx")


def test_a_syntax_error_shows_where_python_points(tmp_path):
    path = tmp_path / "learner.py"
    source = "def t5_relative_pos(seed, T, num_buckets, max_distance)\n    return 1\n"
    path.write_text(source)
    with pytest.raises(SyntaxError) as info:
        compile(source, str(path), "exec")
    tb = tracebacks.describe(info.value, str(path), during="import")["traceback"]
    lines = tb.splitlines()
    assert f'  File "{path}", line 1' in lines and lines[-1] == "SyntaxError: expected ':'"
    assert lines[-2].strip() == "^"


def test_without_a_frame_in_the_learners_file_the_last_exception_is_shown_as_python_prints_it(tmp_path):
    def wiring():
        return {}["missing"]

    with pytest.raises(KeyError) as info:
        wiring()
    tb = tracebacks.describe(info.value, str(tmp_path / "learner.py"), during="call")["traceback"]
    lines = tb.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert any("in wiring" in line for line in lines) and "    return {}[\"missing\"]" in lines
    assert lines[-1] == "KeyError: 'missing'"


def test_a_deep_traceback_outside_the_learners_file_keeps_the_frames_nearest_the_error(tmp_path):
    helper = tmp_path / "helper.py"  # a file of theirs, not the graded one
    helper.write_text(RECURSION)
    exc = error_of(helper, "ping", 0)
    lines = tracebacks.learner_traceback(exc, str(tmp_path / "learner.py")).splitlines()
    assert len(lines) <= 60 and lines[0] == "Traceback (most recent call last):"
    assert re.fullmatch(r"  \.\.\. \d+ lines left out \.\.\.", lines[1]) and lines[2].startswith('  File "')
    assert lines[-1] == "RecursionError: maximum recursion depth exceeded"


def test_an_exception_never_raised_is_its_line_alone(tmp_path):
    assert tracebacks.learner_traceback(RecursionError("x"), str(tmp_path / "learner.py")) == "RecursionError: x"


def error_of(path, call, *args):
    module = types.ModuleType("kata_test")
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    with pytest.raises(BaseException) as info:
        getattr(module, call)(*args)
    return info.value


def test_a_grader_frame_in_any_package_is_left_out_of_a_learners_traceback(tmp_path):
    """The learner's traceback counts the grader's frames, from whichever package, as the grader's."""
    import importlib.util

    from grader.sandbox import moved

    path = tmp_path / "learner.py"
    path.write_text("def f(through):\n    return through(lambda: g())\n\n\ndef g():\n    raise ValueError('bad')\n")
    spec = importlib.util.spec_from_file_location("learner_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        moved.observe(lambda: module.f(moved.observe))  # the learner's code, through grader.sandbox.moved
    except ValueError as exc:
        text = tracebacks.learner_traceback(exc, str(path))
    assert "1 frame in the grader left out" in text and "moved.py" not in text and str(ROOT / "grader") not in text, text


def test_a_syntax_error_is_said_once_with_no_grader_frame(tmp_path):
    """Loading a file that does not parse: the message gives the error without its location (the report
    gives that beside it), and the traceback starts at the learner's file, not in the worker's package."""
    path = tmp_path / "rel_shift.py"
    source = b"def rel_shift(seed, x):\n    return x +\n"
    reply, _ = worker.load({"path": str(path), "entry": "rel_shift", "key": "k"}, [np.frombuffer(source, np.uint8)])
    error = reply["error"]
    assert (error["type"], error["message"], error["line"]) == ("SyntaxError", "invalid syntax", 2)
    assert error["traceback"].splitlines()[0].strip() == f'File "{path}", line 2', error["traceback"]
    assert "worker.py" not in error["traceback"]



# -- the kind of error and where it was raised ---------------------------------------------------------------

KINDS = '''import sys


def todo(x):
    raise NotImplementedError("fill in todo")


def leaves(x):
    sys.exit(3)


def deep(x):
    return inner(x)


def inner(x):
    return x["missing"]
'''


@pytest.mark.parametrize("call, kind, kind_type, line", [("todo", "not_implemented", "NotImplementedError", 5),
                                                         ("leaves", "exit", "SystemExit", 9),
                                                         ("deep", "exception", "TypeError", 17)])
def test_an_error_s_kind_and_its_innermost_line_in_the_graded_file(tmp_path, call, kind, kind_type, line):
    error, path = raised(tmp_path, KINDS, call, 0)
    assert (error["kind"], error["type"], error["file"], error["line"]) == (kind, kind_type, path, line)
    assert error["during"] == "call" and error["traceback"].splitlines()[-1].startswith(kind_type)


def test_a_call_with_the_wrong_number_of_arguments_is_a_signature_error_not_an_exception_inside(tmp_path):
    error, _ = raised(tmp_path, KINDS, "todo", 0, 1)
    assert (error["kind"], error["type"], error["line"]) == ("signature", "TypeError", None)
    error, _ = raised(tmp_path, "def f(x):\n    return len(x, 2)\n", "f", [1])  # raised inside: the learner's
    assert (error["kind"], error["line"]) == ("exception", 2)


def test_running_out_of_memory_and_a_missing_part_have_kinds_of_their_own(tmp_path):
    from grader.sandbox.intercept import PartMissing

    path = str(tmp_path / "learner.py")
    assert tracebacks.describe(MemoryError(), path, during="call")["kind"] == "memory"
    assert tracebacks.describe(RuntimeError("RESOURCE_EXHAUSTED: out of memory"), path, during="call")["kind"] == "memory"
    assert tracebacks.describe(PartMissing("no Block"), path, during="call")["kind"] == "missing"


def test_the_first_line_of_a_message_and_an_empty_one():
    assert tracebacks.first_line(ValueError("\n  first\nsecond")) == "first"
    assert tracebacks.first_line(ValueError()) == ""
    assert tracebacks.describe(ValueError(), "/lab/f.py", during="call")["message"] == "ValueError"
