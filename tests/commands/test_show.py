"""The pages a learner opens (`grade <problem> --html`, `grade show <problem>`), as a browser shows them: one
headless Chromium for the module (tests/browser.py), each page opened as a file, offline."""

import json
from pathlib import Path

import pytest

from browser import Browser
from conftest import ROOT

pytestmark = pytest.mark.grading

WRONG = ROOT / "tests" / "submissions" / "t5_relative_bias" / "offsets_query_minus_key.py"  # swapped_direction
IMAGES_LOADED = "[...document.images].map(i => i.complete && i.naturalWidth > 0)"


@pytest.fixture(scope="module")
def browser():
    with Browser() as started:
        yield started


def test_the_html_page_of_a_failure_shows_its_figure_above_the_report(grade, browser, tmp_path):
    path = tmp_path / "page.html"
    code, out, _ = grade("t5_relative_bias", "--file", WRONG, "--html", path)
    assert code == 1 and "Likely mistake (swapped_direction)" in out  # the text report, printed as usual
    assert out.rstrip().endswith(f"The report as a page: {path}")
    shown = browser.open(path)
    assert shown.evaluate(IMAGES_LOADED) == [True]
    assert shown.problems() == []
    said = shown.text()
    assert "t5_relative_bias: FAIL" in said and "Likely mistake (swapped_direction)" in said
    assert "Mismatches (x):" in said and "Replay just this case" in said
    assert shown.evaluate("document.images[0].alt").startswith("expected | yours | where they differ. Likely mistake")
    assert shown.screenshot(tmp_path / "page.png").stat().st_size > 0


def test_show_draws_every_worked_example_beside_the_learners_output(grade, browser, tmp_path):
    path = tmp_path / "examples.html"
    code, out, _ = grade("show", "t5_relative_bias", "--file", WRONG, "--html", path)
    assert (code, out) == (0, f"{path}\n")
    shown = browser.open(path)
    examples = ROOT / "problems" / "t5_relative_bias" / "problem.toml"
    names = [line.split("=", 1)[1].strip().strip('"') for line in examples.read_text().splitlines()
             if line.startswith("name = ")]
    assert shown.evaluate(IMAGES_LOADED) == [True] * len(names)
    assert shown.problems() == []
    said = shown.text()
    assert all(name in said for name in names) and said.count("FAIL - ") == len(names)
    assert shown.screenshot(tmp_path / "examples.png").stat().st_size > 0


def test_show_draws_the_expected_output_alone_where_the_file_does_not_run(grade, tmp_path):
    stub = tmp_path / "t5_relative_bias.py"
    stub.write_text("def t5_relative_bias(seed, q_len, k_len, num_heads, num_buckets, max_distance, bidirectional):\n"
                    "    raise NotImplementedError\n")
    code, out, _ = grade("show", "t5_relative_bias", "--file", stub, "--json", "--first")
    assert code == 0 and len(out.splitlines()) == 1
    shown = json.loads(out)
    case = shown["counterexample"]
    assert shown["status"] == "not_started" and case["actual"] is None
    assert case["expected_shape"] == [1, 2, 3, 5] and len(case["expected"]) == 30
