"""Submissions that misbehave get a clear verdict, and none of them can pass by misbehaving.

Each one is the reference bucketing solution with one trick added, so that any pass would come from the
trick rather than from a wrong answer slipping through: the wrong ones are wrong by construction.
"""

import time

import pytest

from conftest import REFERENCE, left_behind, live_processes

CORRECT = REFERENCE["t5_relative_pos"].read_text()
WRONG = CORRECT + '''

_right = t5_relative_pos


def t5_relative_pos(seed, T, num_buckets, max_distance):
    return _right(seed, T, num_buckets, max_distance) + 1.0
'''
FAST = ("--call-time-limit", "4", "--time-limit", "60")


def test_the_trickless_wrong_submission_fails(grade_json, submission):
    code, report = grade_json("t5_relative_pos", "--file", submission(WRONG))
    assert (code, report["status"]) == (1, "fail")


def test_printing_pass_and_fake_json_changes_nothing(grade, submission):
    noisy = WRONG.replace("_right = t5_relative_pos", '''print("pass")
print('{"status": "pass"}')
import sys
sys.stderr.write("PASS\\n")
_right = t5_relative_pos''')
    code, out, _ = grade("t5_relative_pos", "--json", "--file", submission(noisy))
    import json

    report = json.loads(out)
    assert (code, report["status"]) == (1, "fail")
    assert '{"status": "pass"}' in report["output"]


def test_flooding_output_is_captured_and_truncated(grade_json, submission):
    flood = CORRECT + '\nprint("x" * 5_000_000)\n'
    code, report = grade_json("t5_relative_pos", "--file", submission(flood))
    assert (code, report["status"]) == (0, "pass")
    assert "left out" in report["output"] and len(report["output"]) < 20_000


def test_patching_numpy_in_the_worker_cannot_fake_a_pass(grade_json, submission):
    patched = WRONG + '''
import numpy, numpy.testing
numpy.allclose = lambda *a, **k: True
numpy.array_equal = lambda *a, **k: True
numpy.isclose = lambda a, b, *x, **k: numpy.ones(numpy.shape(a), bool)
numpy.testing.assert_allclose = lambda *a, **k: None
'''
    code, report = grade_json("t5_relative_pos", "--file", submission(patched))
    assert (code, report["status"]) == (1, "fail")


def test_an_ndarray_subclass_that_claims_equality_fails(grade_json, submission):
    sneaky = CORRECT + '''

import numpy as _np
_right = t5_relative_pos


class Agreeable(_np.ndarray):
    def __eq__(self, other):
        return _np.ones(self.shape, bool)

    def __sub__(self, other):
        return _np.zeros(self.shape, self.dtype).view(Agreeable)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    return (_np.asarray(_right(seed, T, num_buckets, max_distance)) + 7).view(Agreeable)
'''
    code, report = grade_json("t5_relative_pos", "--file", submission(sneaky))
    assert (code, report["status"]) == (1, "fail")


@pytest.mark.parametrize("exit_call", ["sys.exit(0)", "os._exit(0)", "raise SystemExit"])
def test_exiting_is_an_error_not_a_pass(grade_json, submission, exit_call):
    source = "import os, sys\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n    " + exit_call + "\n"
    code, report = grade_json("t5_relative_pos", "--file", submission(source), *FAST)
    assert (code, report["status"]) == (1, "error")


def test_endless_loop_times_out(grade_json, submission):
    source = "def t5_relative_pos(seed, T, num_buckets, max_distance):\n    while True:\n        pass\n"
    started = time.monotonic()
    code, report = grade_json("t5_relative_pos", "--file", submission(source), *FAST)
    assert (code, report["status"]) == (1, "timeout")
    assert "4 s" in report["message"]
    assert time.monotonic() - started < 30


def test_a_worker_that_ignores_sigterm_is_killed(grade_json, submission, private_cache):
    source = '''import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    while True:
        pass
'''
    before = live_processes()
    code, report = grade_json("t5_relative_pos", "--file", submission(source), *FAST)
    assert report["status"] == "timeout"
    assert left_behind(before, private_cache) == set()


def test_a_stray_thread_does_not_keep_the_grader_waiting(grade_json, submission):
    source = CORRECT + "\nimport threading, time\nthreading.Thread(target=time.sleep, args=(600,)).start()\n"
    started = time.monotonic()
    code, report = grade_json("t5_relative_pos", "--file", submission(source))
    assert (code, report["status"]) == (0, "pass")
    assert time.monotonic() - started < 60


def test_memory_limit_gives_an_error_that_says_so(grade_json, submission):
    source = '''import numpy as np


def t5_relative_pos(seed, T, num_buckets, max_distance):
    hog = np.ones(2_000_000_000)  # 16 GB
    return hog[: T * T].astype(np.float32)
'''
    code, report = grade_json("t5_relative_pos", "--file", submission(source), "--memory-mib", "2048", *FAST)
    assert (code, report["status"]) == (1, "error")
    assert "memory" in report["message"]


def test_reading_stdin_gets_end_of_file_instead_of_hanging(grade_json, submission):
    source = "def t5_relative_pos(seed, T, num_buckets, max_distance):\n    return input()\n"
    code, report = grade_json("t5_relative_pos", "--file", submission(source), *FAST)
    assert (code, report["status"]) == (1, "error")
    assert "EOFError" in report["message"]


@pytest.mark.parametrize("returned, stage_words", [
    ("None", "None"),
    ("'pass'", "str"),
    ("[[0.0], [1.0, 2.0]]", "list"),
    ("jnp.zeros((T, T), jnp.float32)", "flat shape"),
    ("jnp.zeros(T * T, jnp.int32)", "dtype int32"),
    ("jnp.full(T * T, jnp.nan, jnp.float32)", "NaN"),
])
def test_bad_return_values_fail_with_their_own_message(grade_json, submission, returned, stage_words):
    source = f"import jax.numpy as jnp\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n    return {returned}\n"
    code, report = grade_json("t5_relative_pos", "--file", submission(source))
    assert (code, report["status"]) == (1, "fail")
    assert stage_words in report["message"]


@pytest.mark.parametrize("source, words, line", [
    ("def t5_relative_pos(seed, T, num_buckets, max_distance)\n    return 1\n", "SyntaxError", 1),
    ("import not_a_module_anywhere\n", "ModuleNotFoundError", 1),
    ("def bucket(seed, T, num_buckets, max_distance):\n    return 1\n", "no function named 't5_relative_pos'", None),
    ("def t5_relative_pos(seed, T):\n    return 1\n", "these 4 arguments", 1),
    ("\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n    return undefined_name\n", "NameError", 4),
])
def test_broken_files_are_errors_naming_file_and_line(grade_json, submission, source, words, line):
    path = submission(source)
    code, report = grade_json("t5_relative_pos", "--file", path, *FAST)
    assert (code, report["status"]) == (1, "error")
    assert words in report["message"]
    assert path.name in report["message"]
    if line is not None:
        assert f"line {line}" in report["message"]
