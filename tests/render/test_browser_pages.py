"""The pages the grader writes, as a person sees them: each rendered in headless Chromium (tests/browser.py,
one browser for the module), its pictures loaded, its console quiet, nothing fetched, a screenshot taken.
Chromium missing is a failure, not a skip (.ci/run installs it)."""

from __future__ import annotations

import io
import struct

import pytest

from browser import Browser
from grader.core.verdict import Pitfall, Status
from grader.core.verdict_report import Report
from grader.instructor import class_report
from grader.render import html

pytestmark = pytest.mark.grading  # a browser is a process


@pytest.fixture(scope="module")
def browser():
    with Browser() as started:
        yield started


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_a_page_with_a_report_and_its_pictures_shows_them_all(browser, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4, 2), dpi=50)
    figure.add_subplot().imshow([[0, 1, 2], [3, 4, 5]])
    drawn, markup = io.BytesIO(), io.StringIO()
    figure.savefig(drawn, format="png")
    figure.savefig(markup, format="svg")
    report = "FAIL: t5_relative_pos <yours>\n\n  expected   1  2\n  yours      1  3"
    path = tmp_path / "page.html"
    path.write_text(html.page("t5_relative_pos: FAIL", html.pre(report), html.png(drawn.getvalue(), "expected | yours"),
                              html.svg(markup.getvalue(), "bias per head", caption="the named mistake"),
                              html.table(["status", "n"], [["fail", 3]], numeric=[1], classes={0: "cell"})))

    shown = browser.open(path)

    assert shown.evaluate("[...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight])") \
        == [[True, *png_size(drawn.getvalue())]]
    assert shown.evaluate("document.querySelector('figure svg').getBoundingClientRect().width") > 100
    assert shown.evaluate("document.querySelector('pre').innerText") == report
    assert "the named mistake" in shown.text()
    assert shown.problems() == []
    shot = shown.screenshot(tmp_path / "page.png")
    width, height = png_size(shot.read_bytes())
    assert width >= 1000 and height > 300


def test_the_class_page_shows_its_picture_and_the_most_frequent_mistake_first(browser, tmp_path):
    def failed(mistake: str) -> Report:
        return Report("rel_shift", Status.FAIL, "your output differs",
                      pitfall=Pitfall(mistake, f"{mistake}, explained"))

    reports = {"ada": failed("wrong_transposed"), "bo": failed("wrong_pad_wrong_side"),
               "cy": failed("wrong_pad_wrong_side"),
               "di": Report("rel_shift", Status.PASS, "all checks passed"),
               "ed": Report.not_graded("rel_shift", Status.ERROR, "no rel_shift.py in ed")}
    summary = class_report.summarize("rel_shift", [class_report.Graded(n, r, 1.0) for n, r in reports.items()])
    _, page = class_report.write(tmp_path, [summary])

    shown = browser.open(page)

    assert shown.evaluate("[...document.images].map(i => i.complete && i.naturalWidth > 300)") == [True]
    assert shown.problems() == []
    first = shown.evaluate("[...document.querySelectorAll('h3')].find(h => h.textContent == 'Named mistakes')"
                           ".nextElementSibling.querySelector('tbody tr').innerText")
    assert first.split("\t")[:3] == ["wrong_pad_wrong_side", "2", "bo, cy"]
    assert "1 of 5 submissions passed (20%)" in shown.text()
    assert png_size(shown.screenshot(tmp_path / "class.png").read_bytes())[1] > 600


def test_no_chromium_is_a_failure_that_says_how_to_install_it(monkeypatch, tmp_path):
    import browser as harness

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(harness.BrowserError, match="apt-get install chromium"):
        Browser().__enter__()
