"""The text report, part by part: the explanation in its order (known mistake, diagnosis, parameter tree,
first wrong part), broken properties, tracebacks that keep the learner's own frames, and the small things
(a plural, an ellipsis, a relative error that cannot be 0). Verdicts are built by hand; tracebacks come
from real exceptions, described in this process as the worker describes them (how they are described is
tests/sandbox/test_tracebacks.py's)."""

import re
from dataclasses import replace

import numpy as np
import pytest

from grader.problem import problems
from grader.render import report, text
from grader.sandbox import tracebacks
from grader.core.compare import compare
from grader.core.verdict_report import Report
from grader.core.verdict import Check, CheckKind, Diagnosis, Outcome, Part, Pitfall, Status, Verdict

from conftest import ROOT
from raising import JAX_DEEP, LIBRARY_RUN, raised, unfiltered  # noqa: F401  (unfiltered: a fixture)

def as_text(problem, verdict, replay):
    """The command line's text report of ``verdict``, its arrays whole."""
    return text.render(report.build(problem, verdict, replay))




@pytest.fixture(scope="module")
def t5():
    return problems.load(ROOT, "t5_relative_pos")


@pytest.fixture(scope="module")
def rmsnorm():
    return problems.load(ROOT, "rmsnorm")


def failing(problem, actual=None, **verdict):
    ex = problem.examples[0]
    expected = ex.expected.reshape(-1)
    if actual is None:
        actual = expected.copy()
        actual[1] += 1
    c = compare(expected_flat=expected, natural_shape=ex.expected.shape, dtype=problem.output_dtype,
                result={"type": "array"}, spec={"dtype": actual.dtype.name, "shape": list(actual.shape)},
                actual=actual, exact=problem.exact, rtol=problem.rtol, atol=problem.atol)
    outcome = Outcome("worked example", ex.args, Status.FAIL, c.message, comparison=c, actual=actual)
    return Verdict(problem.slug, Status.FAIL, c.message, counterexample=outcome, **verdict)


# -- what explains a failure, in order ---------------------------------------------------------------------

def test_pitfall_diagnosis_parameters_first_wrong_part_grid_and_properties_read_in_that_order(t5):
    verdict = failing(
        t5, pitfall=Pitfall("swapped_direction", "You swapped i and j."),
        diagnosis=Diagnosis("transpose", "the output is the expected one transposed: swap the axes i and j"),
        params_diff=["Your parameter tree differs:", "missing parameter params/w (4,)"],
        first_wrong_part=Part("decoder_0/self_attn", "SelfAttention called with x (1 × 3 × 8): 3 of 24 values differ",
                              details=["Expected (3 × 8):", "  [0] 1 2 3"]),
        checks=[Check("property: depends only on offset", Status.FAIL, "cells (0, 1) and (1, 2) differ", CheckKind.PROPERTY),
                Check("property: symmetric buckets", Status.PASS, "holds", CheckKind.PROPERTY),
                Check("jit", Status.WARN, "graded eagerly")])
    lines = as_text(t5, verdict, "grade t5_relative_pos --replay case.json").splitlines()
    assert lines[:12] == [
        "t5_relative_pos: FAIL - 1 of 16 values differ (exact)",
        "Likely mistake (swapped_direction): You swapped i and j.",
        "Diagnosis: the output is the expected one transposed: swap the axes i and j",
        "",
        "  Your parameter tree differs:",
        "  missing parameter params/w (4,)",
        "",
        "First wrong part: decoder_0/self_attn",
        "  SelfAttention called with x (1 × 3 × 8): 3 of 24 values differ",
        "  Expected (3 × 8):",
        "    [0] 1 2 3",
        "",
    ]
    assert lines[12].startswith("Called t5_relative_pos(")
    order = [next(i for i, line in enumerate(lines) if line.startswith(start))
             for start in ("Called", "Expected (4 × 4):", "Mismatches (x):", "Property broken", "Warning (jit)",
                           "Replay just this case")]
    assert order == sorted(order)
    assert "Property broken (depends only on offset): cells (0, 1) and (1, 2) differ" in lines
    assert not any("symmetric buckets" in line for line in lines)  # a property that holds says nothing


def test_the_parameter_tree_stays_under_the_verdict_line_when_nothing_else_explains_it(t5):
    verdict = failing(t5, params_diff=["Your parameter tree differs:", "missing parameter params/w (4,)"])
    assert as_text(t5, verdict, None).splitlines()[1:3] == ["  Your parameter tree differs:",
                                                                   "  missing parameter params/w (4,)"]


def test_learner_derived_text_in_a_diagnosis_a_part_and_a_property_is_escaped(t5):
    evil = "x\x1b[2J\rt5_relative_pos: PASS\nPASS"
    verdict = failing(t5, diagnosis=Diagnosis("factor", evil), first_wrong_part=Part(evil, evil, details=[evil]),
                      checks=[Check(f"property: {evil}", Status.FAIL, evil)])
    text = as_text(t5, verdict, None)
    assert "\x1b" not in text and "\r" not in text
    assert not any(line.startswith(("PASS", "t5_relative_pos: PASS")) for line in text.splitlines())
    assert "First wrong part: x\\x1b[2J\\rt5_relative_pos: PASS\\nPASS" in text.splitlines()


def test_a_long_first_wrong_part_is_cut(t5):
    verdict = failing(t5, first_wrong_part=Part("encoder_0", "differs", details=[f"row {i}" for i in range(500)]))
    lines = as_text(t5, verdict, None).splitlines()
    assert "  row 59" in lines and "  row 60" not in lines and "  ... and 440 more" in lines


# -- small things ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("run, words", [(1, "(1 case in 0.4 s)"), (2, "(2 cases in 0.4 s)"), (0, "(0 cases in 0.4 s)")])
def test_the_case_count_is_singular_for_one(t5, run, words):
    text = as_text(t5, Verdict(t5.slug, Status.PASS, "ok", examples_run=run, duration_s=0.4), None)
    assert text.splitlines()[-1] == words


def test_a_relative_error_where_the_expected_value_is_0_is_never_printed_as_0(t5):
    actual = t5.examples[0].expected.reshape(-1).copy()
    actual[0] = 3  # expected 0 there; the only wrong cell
    text = as_text(t5, failing(t5, actual), None)
    assert "Largest absolute error 3, largest relative error inf (an expected value is 0 where yours is not)" in text
    assert "relative error 0" not in text


def test_a_relative_error_elsewhere_is_a_number(rmsnorm):
    actual = rmsnorm.examples[0].expected.reshape(-1).copy()
    actual[0] *= 1.5
    text = as_text(rmsnorm, failing(rmsnorm, actual), None)
    assert re.search(r"largest relative error 0\.5;", text)


def test_a_grid_marks_the_columns_it_hides_on_either_side(rmsnorm):
    arr = np.arange(2 * 30, dtype=np.float32).reshape(2, 30)
    right = text._grid(arr, rmsnorm.axis_names, (0, 29), width=2)  # columns 18..29 shown, 0..17 hidden on the left
    assert right[0].split()[:2] == ["...", "18"] and right[0].endswith("29")
    assert all(row.split()[1] == "..." for row in right[1:])  # after the row label
    middle = text._grid(arr, rmsnorm.axis_names, (0, 15), width=2)
    assert middle[0].split()[0] == "..." and middle[0].endswith(" ...")
    left = text._grid(arr, rmsnorm.axis_names, (0, 0), width=2)
    assert "..." not in left[0].split()[0] and left[0].endswith(" ...")
    assert not any("..." in row for row in left[1:])


def test_a_grid_keeps_its_columns_aligned_under_the_left_marker(t5):
    arr = np.arange(30 * 30, dtype=np.float32).reshape(30, 30)
    lines = text._grid(arr, t5.axis_names, (29, 29), width=3)
    head, rows = lines[0], [line for line in lines[1:] if line.strip() != "..."]
    assert head.split()[0] == "..." and "(j)" in head
    assert lines[1].strip() == "..."  # rows hidden above
    for row in rows:
        assert row.index("...") == head.index("...")
        assert row.rstrip().endswith(str(int(arr[int(row.split()[0][2:]), 29])))
        assert len(row) == len(head) - len("  (j)")


# -- tracebacks ------------------------------------------------------------------------------------------







def test_the_text_report_shows_the_whole_traceback_starting_at_its_first_line(tmp_path, t5, unfiltered):
    import jax.numpy as jnp

    error, _ = raised(tmp_path, JAX_DEEP, "entry", jnp.ones((2, 4)))
    outcome = Outcome("worked example", t5.examples[0].args, Status.ERROR, "raised", error=error)
    lines = as_text(t5, Verdict(t5.slug, Status.ERROR, "raised", counterexample=outcome), None).splitlines()
    start = lines.index("  Traceback (most recent call last):")
    assert lines[start + 1].startswith('    File "') and lines[start - 1] == ""
    traceback = error["traceback"].splitlines()
    assert lines[start:start + len(traceback)] == [f"  {line}" for line in traceback]


def test_the_report_bounds_a_traceback_a_worker_sent_too_long_keeping_its_last_line(t5):
    tb = "\n".join(["Traceback (most recent call last):"] + [f"  line {i}" for i in range(500)] + ["ValueError: bad"])
    outcome = Outcome("worked example", t5.examples[0].args, Status.ERROR, "raised",
                      error={"kind": "exception", "type": "ValueError", "message": "bad", "file": "x.py", "line": 1,
                             "during": "call", "traceback": tb})
    lines = as_text(t5, Verdict(t5.slug, Status.ERROR, "raised", counterexample=outcome), None).splitlines()
    shown = lines[lines.index("  Traceback (most recent call last):"):lines.index("  ValueError: bad") + 1]
    assert len(shown) == text.TRACEBACK_LINES and "  ... 443 lines left out ..." in shown


def test_an_error_while_loading_the_file_shows_its_traceback_too(tmp_path, t5):
    source = "import json\n\nSETTINGS = json.loads('{not json')\n"
    path = tmp_path / "learner.py"
    path.write_text(source)
    with pytest.raises(ValueError) as info:
        exec(compile(source, str(path), "exec"), {})
    error = tracebacks.describe(info.value, str(path), during="import")
    outcome = Outcome("loading your file", {}, Status.ERROR, "raised", error=error)
    text = as_text(t5, Verdict(t5.slug, Status.ERROR, "raised", counterexample=outcome), None)
    assert f'    File "{path}", line 3, in <module>' in text.splitlines()
    assert any(LIBRARY_RUN.match(line[2:]) and "Python" in line for line in text.splitlines())
    assert "Called" not in text


@pytest.mark.parametrize("count, header", [(1, "Your code printed 1 line:"), (20, "Your code printed 20 lines:"),
                                           (21, "Your code printed 21 lines; the last 20:")])
def test_what_the_code_printed_is_counted_as_it_is_shown(t5, count, header):
    output = "\n".join(f"line {i}" for i in range(1, count + 1))
    lines = as_text(t5, failing(t5, output=output), None).splitlines()
    at = lines.index(header)
    shown = [line for line in lines[at + 1:] if line.startswith("  | ")]
    assert shown == [f"  | line {i}" for i in range(max(1, count - 19), count + 1)]
    assert not any("jax.debug.print" in line for line in lines)


def test_a_printed_tracer_comes_with_how_to_see_the_numbers(t5):
    lines = as_text(t5, failing(t5, output="x = JitTracer(int32[2,2])\n"), None).splitlines()
    at = lines.index("Your code printed 1 line:")
    assert lines[at + 1] == "  | x = JitTracer(int32[2,2])"
    assert "jax.debug.print" in lines[at + 2] and "--no-jit" in lines[at + 2]


def test_a_three_dimensional_output_says_which_other_slices_are_wrong(t5):
    """The grids show one slice of a 3-D output; the report says which others have wrong values too."""
    expected = np.zeros((4, 2, 3), np.float32)
    actual = expected.copy()
    actual[1, 0, 0], actual[3, 1, 2] = 1.0, 5.0
    c = compare(expected_flat=expected.reshape(-1), natural_shape=expected.shape, dtype="float32",
                result={"type": "array"}, spec={"dtype": "float32", "shape": [24]}, actual=actual.reshape(-1),
                exact=False, rtol=1e-5, atol=1e-6)
    outcome = Outcome("generated", t5.examples[0].args, Status.FAIL, c.message, comparison=c, actual=actual)
    lines = as_text(t5, Verdict(t5.slug, Status.FAIL, c.message, counterexample=outcome), None).splitlines()
    assert "  slice [3, :, :]" in lines  # the worst
    assert "Slices with wrong values: 2 of 4 ([1, :, :], [3, :, :]); the grids above show [3, :, :]." in lines


# -- one renderer ---------------------------------------------------------------------------------------

def test_the_json_object_renders_as_the_command_line_report(t5):
    """The notebook and the platforms render the `--json` object; the command line renders the same object
    with its arrays whole: where they fit the JSON, the two texts are one."""
    verdict = failing(t5, pitfall=Pitfall("swapped_direction", "You swapped i and j."),
                      first_wrong_part=Part("encoder_0", "differs", details=["Expected (2 × 2):", "  [0] 1 2"]),
                      checks=[Check("property: depends only on offset", Status.FAIL, "cells differ", CheckKind.PROPERTY),
                              Check("jit", Status.WARN, "graded eagerly")],
                      output="hello\n", examples_run=3, duration_s=0.5)
    replay = "grade t5_relative_pos --replay case.json"
    from_json = text.render(Report.from_json(report.build(t5, verdict, replay).to_json()))
    assert from_json == as_text(t5, verdict, replay)
    assert "Mismatches (x):" in from_json and "Property broken (depends only on offset)" in from_json


def test_a_json_object_with_only_the_first_values_shows_them_flat(t5):
    verdict = report.build(t5, failing(t5), None).wire()
    case = verdict.counterexample
    case = replace(case, expected=case.expected[:5], actual=case.actual[:5], diff=replace(case.diff, mismatch=None))
    lines = text.render(replace(verdict, counterexample=case)).splitlines()
    assert "Expected (4 × 4) (the first values):" in lines and "Got (the first values):" in lines
    assert "Mismatches (x):" not in lines and any(line.startswith("1 of 16 values wrong") for line in lines)


def test_a_platform_result_has_no_name_replay_or_timing(t5):
    verdict = report.build(t5, failing(t5, examples_run=2, duration_s=0.5, isolation="none"), "grade x").wire()
    lines = text.render(verdict, text.PLATFORM).splitlines()
    assert lines[0].startswith("FAIL - ")
    assert not any(line.startswith(("Replay", "(2 cases")) or "without isolation" in line for line in lines)


# -- the verdict line first -------------------------------------------------------------------------------

def test_a_streamed_report_prints_its_verdict_line_once(t5, capsys):
    verdict = failing(t5, examples_run=2, duration_s=0.5)
    whole = as_text(t5, verdict, None)
    streamed = text.Streamed(t5.slug)
    streamed.found(verdict.counterexample)  # the same case as the one finally shown
    assert capsys.readouterr().out == whole.split("\n")[0] + "\n"
    assert streamed.rest(report.build(t5, verdict, None)) == whole.split("\n", 1)[1]


def test_a_streamed_report_says_when_the_case_shown_says_something_else(t5, capsys):
    verdict = failing(t5, examples_run=2, duration_s=0.5)
    first = Outcome("generated", t5.examples[0].args, Status.FAIL, "9 of 16 values differ (exact)")
    streamed = text.Streamed(t5.slug)
    streamed.found(first)
    assert capsys.readouterr().out == "t5_relative_pos: FAIL - 9 of 16 values differ (exact)\n"
    rest = streamed.rest(report.build(t5, verdict, None)).split("\n")
    assert rest[0] == "(That line is the first failing input's.) The case shown below: FAIL - 1 of 16 values differ (exact)"
    assert not any(line.startswith("t5_relative_pos:") for line in rest)


def test_a_report_with_nothing_streamed_is_whole(t5):
    whole = as_text(t5, failing(t5), None)
    assert text.Streamed(t5.slug).rest(report.build(t5, failing(t5), None)) == whole


def test_a_long_parameter_tree_diff_is_cut_once_saying_how_many_more(t5):
    verdict = failing(t5, params_diff=[f"missing parameter params/w{i} (4,)" for i in range(100)])
    lines = as_text(t5, verdict, None).splitlines()
    assert "  missing parameter params/w39 (4,)" in lines and "  missing parameter params/w40 (4,)" not in lines
    assert "  ... and 60 more" in lines and not any(line.endswith("and 1 more") for line in lines)
