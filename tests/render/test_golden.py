"""Exercism's and Gradescope's results, golden: each scenario under tests/render/golden/ holds a verdict as
`grade --json` printed it and the results.json each platform gets from it (see its README). The results
are recomputed from the saved verdict and compared byte for byte; nothing here grades."""

import os
from pathlib import Path

import pytest

from grader.core.verdict_report import Report
from grader.core.verdict import SECOND_PROCESS
from grader.render import formats

GOLDEN = Path(__file__).parent / "golden"
SCENARIOS = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())
REGENERATE = bool(os.environ.get("GRADE_REGENERATE_GOLDEN"))


def test_every_scenario_the_platforms_must_get_right_is_kept():
    assert set(SCENARIOS) >= {"pass", "fail_with_named_mistake", "error_raised_by_learner_code", "timeout",
                              "usage_error", "printed_by_two_processes", "learner_text_with_control_characters"}


def test_the_second_processs_printing_is_marked_as_the_engine_marks_it():
    report = Report.from_json((GOLDEN / "printed_by_two_processes" / "verdict.json").read_text())
    assert f"\n{SECOND_PROCESS}\n" in report.output and SECOND_PROCESS not in report.printed


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_saved_verdict_reads_back_and_writes_out_as_it_was_printed(scenario):
    printed = (GOLDEN / scenario / "verdict.json").read_text()
    assert Report.from_json(printed).to_json() + "\n" == printed


@pytest.mark.parametrize("platform", ["exercism", "gradescope"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_platforms_results_are_the_golden_ones(scenario, platform):
    report = Report.from_json((GOLDEN / scenario / "verdict.json").read_text())
    results = GOLDEN / scenario / platform / "results.json"
    written = formats.FORMATS[platform].write(report)
    if REGENERATE:
        results.parent.mkdir(exist_ok=True)
        results.write_text(written)
    assert written == results.read_text()
