"""The report built from a verdict (grader/render/report.py): one JSON object that fits SCHEMA and stays
small, and a text that learner code cannot draw on. Verdicts are built by hand; nothing here runs a worker."""

import dataclasses
import json

import jsonschema
import numpy as np
import pytest

from grader.core.verdict_report import SCHEMA, VALUES_SHOWN, Report
from grader.problem import cases, problems
from grader.render import report, text
from grader.core.compare import compare
from grader.core.verdict import Check, Diagnosis, Outcome, Part, Pitfall, Status, Verdict

from conftest import ROOT

MiB = 1 << 20
TRACEBACK = ('Traceback (most recent call last):\n  File "t5_relative_pos.py", line 7, in t5_relative_pos\n'
             '    return buckets[T]\nIndexError: index 4 is out of bounds for axis 0 with size 4\n')


@pytest.fixture(scope="module")
def t5():
    return problems.load(ROOT, "t5_relative_pos")


def example(problem):
    ex = problem.examples[0]
    return ex.args, ex.expected


def compared(problem, actual, *, spec_shape=None):
    args, expected = example(problem)
    spec = {"dtype": actual.dtype.name, "shape": list(spec_shape or actual.shape)}
    return compare(expected_flat=expected.reshape(-1), natural_shape=expected.shape, dtype=problem.output_dtype,
                   result={"type": "array"}, spec=spec, actual=actual, exact=problem.exact,
                   rtol=problem.rtol, atol=problem.atol)


def failing(problem, actual, **verdict):
    args, _ = example(problem)
    c = compared(problem, actual)
    outcome = Outcome("worked example", args, Status.FAIL, c.message, comparison=c, actual=actual)
    return Verdict(problem.slug, Status.FAIL, c.message, counterexample=outcome, **verdict)


def erroring(problem, message, traceback=TRACEBACK, **verdict):
    args, _ = example(problem)
    error = {"kind": "exception", "type": "IndexError", "message": message, "file": "t5_relative_pos.py",
             "line": 7, "during": "call", "traceback": traceback}
    outcome = Outcome("worked example", args, Status.ERROR, message, error=error)
    return Verdict(problem.slug, Status.ERROR, f"your function raised IndexError: {message}",
                   counterexample=outcome, **verdict)


def one_value_wrong(problem):
    _, expected = example(problem)
    actual = expected.reshape(-1).copy()
    actual[1] += 1
    return actual


def as_json(problem, verdict, replay=None):
    text = report.build(problem, verdict, replay).to_json()
    obj = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    jsonschema.validate(obj, SCHEMA)
    return text, obj


def as_text(problem, verdict, replay):
    return text.render(report.build(problem, verdict, replay))


# -- JSON: the schema ------------------------------------------------------------------------------------

def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_a_pass_fits_the_schema_with_no_counterexample(t5):
    verdict = Verdict(t5.slug, Status.PASS, "all 21 cases match", isolation="namespaces",
                      checks=[Check("examples", Status.PASS, "1 of 1")], examples_run=21, duration_s=1.2)
    _, obj = as_json(t5, verdict)
    assert (obj["status"], obj["isolation"], obj["counterexample"]) == ("pass", "namespaces", None)
    assert obj["checks"] == [{"name": "examples", "status": "pass", "message": "1 of 1", "kind": "phase"}]


def test_a_failure_fits_the_schema_with_expected_and_actual_values(t5):
    verdict = failing(t5, one_value_wrong(t5), pitfall=Pitfall("swapped_direction", "You swapped i and j."))
    _, obj = as_json(t5, verdict, replay="grade t5_relative_pos --replay case.json")
    cx = obj["counterexample"]
    _, expected = example(t5)
    assert cx["call"] == "t5_relative_pos(seed=0, T=4, num_buckets=8, max_distance=16)"
    assert cx["expected"] == expected.reshape(-1).tolist() and cx["expected_shape"] == [4, 4]
    assert cx["actual"] == one_value_wrong(t5).tolist() and cx["actual_shape"] == [4, 4]
    assert cx["actual_truncated"] is False
    assert cx["diff"]["mismatches"] == 1 and cx["diff"]["first_index"] == [0, 1]
    assert obj["pitfall"] == {"id": "swapped_direction", "message": "You swapped i and j."}


def test_an_error_fits_the_schema_with_its_traceback(t5):
    _, obj = as_json(t5, erroring(t5, "index 4 is out of bounds"))
    error = obj["counterexample"]["error"]
    assert error["type"] == "IndexError" and error["line"] == 7 and error["traceback"] == TRACEBACK
    assert obj["counterexample"]["actual"] is None and obj["counterexample"]["actual_shape"] is None


@pytest.mark.parametrize("problem", ["t5_relative_pos", None])
def test_a_usage_error_fits_the_schema(problem):
    obj = json.loads(Report.not_graded(problem, Status.ERROR, "unknown problem 't5'").to_json())
    jsonschema.validate(obj, SCHEMA)
    assert (obj["problem"], obj["status"], obj["message"]) == (problem, "error", "unknown problem 't5'")
    assert obj["diagnosis"] is None and obj["first_wrong_part"] is None
    assert set(obj) == set(SCHEMA["required"])


def test_a_diagnosis_and_the_first_wrong_part_fit_the_schema_and_the_candidates_stay_out(t5):
    part = Part("decoder_0/self_attn", "SelfAttention(x: 1 × 3 × 8): 24 of 24 values differ",
                details=["Expected (3 × 8):", "  [0] 0.1 0.2"])
    verdict = failing(t5, one_value_wrong(t5), diagnosis=Diagnosis("constant_factor", "every value is 2 times the "
                      "expected one"), first_wrong_part=part, pitfall_candidates=["no_clamp", "clamp_to_half"])
    text, obj = as_json(t5, verdict)
    assert obj["diagnosis"] == {"id": "constant_factor", "message": "every value is 2 times the expected one"}
    assert obj["first_wrong_part"] == {"path": "decoder_0/self_attn",
                                       "message": "SelfAttention(x: 1 × 3 × 8): 24 of 24 values differ",
                                       "details": ["Expected (3 × 8):", "  [0] 0.1 0.2"]}
    assert set(obj) == set(SCHEMA["required"])
    assert "candidates" not in text and "no_clamp" not in text


def test_a_verdict_without_them_says_null_for_both(t5):
    _, obj = as_json(t5, Verdict(t5.slug, Status.PASS, "ok"))
    assert obj["diagnosis"] is None and obj["first_wrong_part"] is None


def test_a_relative_error_where_the_expected_value_is_0_is_infinite_not_0(t5):
    _, expected = example(t5)
    actual = expected.reshape(-1).copy()
    assert actual[0] == 0
    actual[0] = 1  # only a cell whose expected value is 0 is wrong
    _, obj = as_json(t5, failing(t5, actual))
    diff = obj["counterexample"]["diff"]
    assert (diff["max_abs_error"], diff["max_rel_error"]) == (1.0, "Infinity")


def test_non_finite_values_are_written_as_strings_any_json_parser_reads(t5):
    actual = one_value_wrong(t5)
    actual[2:4] = [np.nan, -np.inf]
    _, obj = as_json(t5, failing(t5, actual))
    assert obj["counterexample"]["actual"][2:4] == ["NaN", "-Infinity"]


# -- JSON: bounded ---------------------------------------------------------------------------------------

def test_a_50_million_value_answer_is_cut_to_a_window_and_keeps_the_json_under_1_mib(t5):
    args, _ = example(t5)
    huge = np.arange(50_000_000, dtype=np.float32).reshape(5000, 10000)
    c = compared(t5, huge)
    assert c.stage == "shape"
    outcome = Outcome("worked example", args, Status.FAIL, c.message, comparison=c, actual=huge)
    text, obj = as_json(t5, Verdict(t5.slug, Status.FAIL, c.message, counterexample=outcome))
    cx = obj["counterexample"]
    assert len(text.encode()) < MiB
    assert cx["actual_shape"] == [5000, 10000] and cx["actual_truncated"] is True
    assert cx["actual"] == list(range(VALUES_SHOWN))


def test_json_stays_under_1_mib_when_every_learner_string_is_as_long_and_escaped_as_can_be(t5):
    worst = "\U0001f600\x1b" * 500_000  # 12 and 6 characters each once escaped
    verdict = erroring(t5, worst, traceback=worst, output=worst, params_diff=[worst] * 10_000,
                       checks=[Check("jit", Status.WARN, worst)] * 20, diagnosis=Diagnosis(worst, worst),
                       first_wrong_part=Part(worst, worst, details=[worst] * 10_000))
    verdict.counterexample.error.update(type=worst, file=worst)
    text, obj = as_json(t5, verdict, replay="grade t5_relative_pos --replay case.json")
    assert len(text.encode()) < MiB
    assert obj["counterexample"]["replay"] == "grade t5_relative_pos --replay case.json"


def test_printed_output_is_capped_in_the_json_even_past_the_run_layers_cut(t5):
    verdict = Verdict(t5.slug, Status.PASS, "ok", output="x" * 10 * MiB)
    _, obj = as_json(t5, verdict)
    assert len(obj["output"]) < 2 * text.OUTPUT_CAP


# -- text: learner text is shown, not obeyed --------------------------------------------------------------

def test_ansi_escapes_and_carriage_returns_in_printed_output_are_written_out(t5):
    verdict = Verdict(t5.slug, Status.FAIL, "2 of 16 values differ", output="\x1b[2J\x1b[Hwiped\rover\bx\x7f\x9b\n")
    text = as_text(t5, verdict, None)
    assert not any(ch in text for ch in "\x1b\r\b\x7f\x9b")
    assert "  | \\x1b[2J\\x1b[Hwiped\\rover\\x08x\\x7f\\x9b" in text


def test_a_printed_verdict_line_stays_inside_the_printed_block(t5):
    fake = "t5_relative_pos: PASS - all 21 cases match\nPASS"
    text = as_text(t5, Verdict(t5.slug, Status.FAIL, "2 of 16 values differ", output=fake), None)
    lines = text.splitlines()
    assert lines[0].startswith("t5_relative_pos: FAIL")
    assert "  | t5_relative_pos: PASS - all 21 cases match" in lines and "  | PASS" in lines
    assert not any(line.startswith(("PASS", "t5_relative_pos: PASS")) for line in lines)


def test_control_characters_in_an_error_message_and_traceback_are_written_out(t5):
    message = "bad\x1b[2K\rt5_relative_pos: PASS"
    text = as_text(t5, erroring(t5, message, traceback=TRACEBACK + message), None)
    assert "\x1b" not in text and "\r" not in text
    assert text.splitlines()[0].endswith("bad\\x1b[2K\\rt5_relative_pos: PASS")
    assert "  IndexError: index 4 is out of bounds for axis 0 with size 4" in text.splitlines()


def test_a_newline_in_an_error_message_cannot_start_a_line_of_its_own(t5):
    text = as_text(t5, erroring(t5, "oops\nt5_relative_pos: PASS - all good"), None)
    assert text.splitlines()[0].endswith("oops\\nt5_relative_pos: PASS - all good")
    assert not any(line.startswith("t5_relative_pos: PASS") for line in text.splitlines())


def test_the_json_escapes_control_characters_too(t5):
    text, obj = as_json(t5, Verdict(t5.slug, Status.PASS, "ok", output="\x1b[2J\r"))
    assert "\x1b" not in text and "\r" not in text and obj["output"] == "\x1b[2J\r"


# -- text: what it shows ---------------------------------------------------------------------------------

def test_the_isolation_note_appears_when_code_ran_without_isolation(t5):
    text = as_text(t5, Verdict(t5.slug, Status.PASS, "ok", isolation="none", examples_run=3), None)
    assert text.count("without isolation") == 1


def test_no_isolation_note_appears_when_code_ran_in_namespaces(t5):
    text = as_text(t5, Verdict(t5.slug, Status.PASS, "ok", isolation="namespaces"), None)
    assert "isolation" not in text


def test_a_failure_shows_the_call_both_grids_the_marks_and_the_replay(t5):
    verdict = failing(t5, one_value_wrong(t5), pitfall=Pitfall("swapped_direction", "You swapped i and j."))
    text = as_text(t5, verdict, "grade t5_relative_pos --replay case.json")
    assert text.splitlines()[0] == "t5_relative_pos: FAIL - 1 of 16 values differ (exact)"
    assert "Likely mistake (swapped_direction): You swapped i and j." in text
    assert "Called t5_relative_pos(seed=0, T=4, num_buckets=8, max_distance=16)" in text
    assert "Expected (4 × 4):" in text and "Got:" in text and "Mismatches (x):" in text
    assert "i=0" in text and "j - i = 1" in text
    assert "Replay just this case: grade t5_relative_pos --replay case.json" in text


def test_a_warning_check_is_shown_and_a_passing_one_is_not(t5):
    checks = [Check("jit", Status.WARN, "graded eagerly"), Check("examples", Status.PASS, "1 of 1")]
    text = as_text(t5, Verdict(t5.slug, Status.PASS, "ok", checks=checks), None)
    assert "Warning (jit): graded eagerly" in text and "examples" not in text


# -- cases on disk ---------------------------------------------------------------------------------------

def test_a_case_comes_back_from_its_json_unchanged():
    rmsnorm = problems.load(ROOT, "rmsnorm")
    args = rmsnorm.examples[0].args
    back = cases.case_from_json(rmsnorm, json.loads(json.dumps(cases.case_to_json(rmsnorm, args))))
    assert back["seed"] == args["seed"] and back["eps"] == args["eps"]
    assert back["x"].dtype == np.float32 and np.array_equal(back["x"], args["x"])


def test_a_case_with_a_missing_argument_is_refused_naming_it(t5):
    data = cases.case_to_json(t5, example(t5)[0])
    del data["T"]
    with pytest.raises(problems.ProblemError, match="T is missing"):
        cases.case_from_json(t5, data)


def test_a_saved_case_is_named_by_the_kinds_digest_and_replays(t5, tmp_path):
    problem = dataclasses.replace(t5, root=tmp_path)
    args, _ = example(t5)
    path = cases.save_case(problem, args)
    digest = cases.kinds.args_digest(t5.args, args)[:10]
    assert path == tmp_path / ".grade" / "cases" / f"t5_relative_pos-{digest}.json"
    data = json.loads(path.read_text())
    assert data["problem"] == "t5_relative_pos" and cases.case_from_json(t5, data["args"]) == args
