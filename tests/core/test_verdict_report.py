"""The typed report (grader/core/verdict_report.py): what `grade --json` writes reads back into the same report, for
every status; what is not such an object is refused, saying why. Reports are built by hand."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from grader.core.compare import Stage
from grader.core.verdict_report import (MAX_JSON_CHARS, RECAP, SCHEMA, VALUES_SHOWN, Case, Diff, Error, InvalidReport, Report,
                                Tolerance, WrongPart, number)
from grader.core.verdict import SECOND_PROCESS, Check, CheckKind, Diagnosis, Isolation, Pitfall, Status

CHECKS = (Check("worked example", Status.PASS, "all values match"),
          Check("property: depends only on offset", Status.FAIL, "cells differ", CheckKind.PROPERTY),
          Check("jit", Status.WARN, "graded eagerly"))


def case(**changes) -> Case:
    fields = dict(name="generated", call="f(seed=0, T=2)", inputs={"seed": 0, "T": 2}, expected=(0.0, 1.0, 2.0, 3.0),
                  expected_shape=(2, 2), axes=("i", "j"), tolerance=Tolerance(False, 1e-05, 0.0001),
                  actual=(0.0, 1.5, 2.0, 3.0), actual_shape=(2, 2), actual_truncated=False,
                  diff=Diff(Stage.VALUES, "1 of 4 values differ", 1, (0, 1), (0, 1), 0.5, 0.5,
                            (False, True, False, False)),
                  error=None, replay="grade f --replay .grade/cases/f-0123456789.json")
    return Case(**{**fields, **changes})


RAISED = Error("ValueError", "boom", "/home/ann/f.py", 'Traceback ...\nValueError: boom\n', 2)
REPORTS = {
    "pass": Report("f", Status.PASS, "all 24 cases match", Isolation.NAMESPACES, CHECKS[:1], examples_run=24,
                   duration_s=1.25, output="hello\n"),
    "fail": Report("f", Status.FAIL, "1 of 4 values differ", Isolation.USER, CHECKS, case(),
                   Pitfall("swapped", "You swapped i and j."), Diagnosis("transposed", "your output is transposed"),
                   WrongPart("decoder_0/attn", "differs", ("Expected (2 × 2):", "  [0] 1 2")),
                   ("missing parameter params/w (4,)",), 5, 0.5),
    "error": Report("f", Status.ERROR, "ValueError in your function: boom", Isolation.NAMESPACES, CHECKS[:1],
                    case(expected=None, actual=None, actual_shape=None, diff=None, error=RAISED), examples_run=1),
    "a file that does not load": Report("f", Status.ERROR, "your file raised", counterexample=case(
        call="", inputs={}, expected=None, expected_shape=(), axes=None, actual=None, actual_shape=None, diff=None,
        error=Error("SyntaxError", "invalid syntax", None, None, None), replay=None)),
    "timeout": Report("f", Status.TIMEOUT, "did not return within 3 s", Isolation.NAMESPACES,
                      (Check("generated inputs", Status.TIMEOUT, "did not return"),), case(diff=None, actual=None,
                                                                                          actual_shape=None)),
    "not started": Report("f", Status.NOT_STARTED, "the stub raises NotImplementedError", Isolation.NAMESPACES,
                          (Check("worked example", Status.NOT_STARTED, "not implemented"),)),
    "usage error": Report.not_graded(None, Status.ERROR, "no problem named 'g'"),
    "not graded": Report.not_graded("f", "not_started", "Your submission has no f.py."),
    "non-finite numbers": Report("f", Status.FAIL, "NaN where the expected value is finite", counterexample=case(
        actual=(0.0, "NaN", "Infinity", "-Infinity"),
        diff=Diff(Stage.FINITE, "NaN at (0, 1)", 3, (0, 1), None, "NaN", "Infinity", None))),
    "learner text with control characters": Report("f", Status.FAIL, "bad\x1b[31m red\nf: PASS - forged",
                                                   output="\x1b[2J\r\u202e" + "é" * 10),
}


@pytest.mark.parametrize("name", REPORTS)
def test_a_report_reads_back_from_its_json_as_itself(name):
    report = REPORTS[name]
    text = report.to_json()
    assert Report.from_json(text) == report == report.wire()
    assert Report.from_json(text.encode()) == report  # as a command's stdout, too


@pytest.mark.parametrize("name", REPORTS)
def test_the_json_is_one_object_of_the_schema_in_its_order(name):
    obj = json.loads(REPORTS[name].to_json(), parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    assert list(obj) == list(SCHEMA["properties"])
    if obj["counterexample"] is not None:
        assert list(obj["counterexample"]) == list(SCHEMA["properties"]["counterexample"]["anyOf"][1]["properties"])


def test_whole_arrays_travel_as_their_first_values_flat_with_non_finite_ones_as_strings():
    values = np.arange(2 * VALUES_SHOWN, dtype=np.float32).reshape(2, VALUES_SHOWN)
    values[0, :3] = [np.nan, np.inf, -np.inf]
    mismatch = np.zeros(values.shape, bool)
    whole = replace(REPORTS["fail"], counterexample=case(
        expected=values, expected_shape=values.shape, actual=values, actual_shape=values.shape,
        diff=Diff(Stage.VALUES, "m", 0, None, None, 0.0, 0.0, mismatch)))
    back = Report.from_json(whole.to_json())
    assert back == whole.wire()
    cx = back.counterexample
    assert cx.expected[:4] == ("NaN", "Infinity", "-Infinity", 3.0) and len(cx.actual) == VALUES_SHOWN
    assert cx.actual_truncated and cx.expected_shape == (2, VALUES_SHOWN) and cx.diff.mismatch == (False,) * VALUES_SHOWN
    first = [number(v) for v in cx.expected[:3]]
    assert math.isnan(first[0]) and first[1:] == [math.inf, -math.inf]


def test_learner_text_too_long_for_the_json_is_cut_keeping_the_inputs_and_the_replay():
    worst = "\U0001f600\x1b" * 200_000  # 12 and 6 characters each once escaped
    inputs = {"note": "x" * 1000}
    report = Report("f", Status.FAIL, worst, checks=(Check("jit", Status.WARN, worst),) * 3,
                    counterexample=case(inputs=inputs, error=Error(worst, worst, worst, worst, 3)),
                    params_diff=(worst,) * 3, output=worst)
    text = report.to_json()
    assert len(text) < MAX_JSON_CHARS
    back = Report.from_json(text)
    assert back == report.wire() != report
    assert len(back.message) < 2 * RECAP and len(back.output) < 2 * RECAP
    assert back.counterexample.inputs == inputs and back.counterexample.replay == report.counterexample.replay
    assert back.checks[0].status == Status.WARN and back.status == Status.FAIL


def test_what_two_processes_printed_reads_without_the_graders_line_between_them():
    report = Report("f", Status.PASS, "ok", output=f"loaded\n\n{SECOND_PROCESS}\nloaded\n")
    assert report.printed == "loaded\n\nloaded\n"
    assert Report("f", Status.PASS, "ok", output="only one\n").printed == "only one\n"
    assert Report.from_json(report.to_json()).output == report.output  # the JSON keeps it


def test_every_string_can_be_changed_at_once_but_the_kept_fields():
    report = REPORTS["error"]
    moved = report.map_text(lambda s: s.replace("/home/ann", "<dir>"))
    assert moved.counterexample.error.file == "<dir>/f.py" and moved.status is Status.ERROR
    kept = report.map_text(str.upper, keep=("inputs", "replay", "call"))
    assert kept.counterexample.replay == report.counterexample.replay and kept.message.isupper()


@pytest.mark.parametrize("text, says", [
    ("not json at all", "not JSON"),
    ("[1, 2]", "is not of type 'object'"),
    (json.dumps({**json.loads(REPORTS["pass"].to_json()), "status": "warn"}), "['status']"),
    (json.dumps({k: v for k, v in json.loads(REPORTS["pass"].to_json()).items() if k != "checks"}), "'checks'"),
    (json.dumps({**json.loads(REPORTS["pass"].to_json()), "extra": 1}), "'extra'"),
    (REPORTS["fail"].to_json().replace('"max_abs_error": 0.5', '"max_abs_error": "nan"'), "['max_abs_error']"),
])
def test_what_is_not_a_report_is_refused_saying_what_and_where(text, says):
    with pytest.raises(InvalidReport, match="^not a verdict of `grade --json`") as refused:
        Report.from_json(text)
    assert says in str(refused.value)
