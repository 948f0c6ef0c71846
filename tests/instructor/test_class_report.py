"""A class's mistakes summed up (grader/instructor/class_report.py) from reports built by hand: the counts,
the order (the most frequent first), which submissions, summary.json against its schema, the picture by the
bars it draws. `grade batch` writing them: tests/instructor/test_batch.py; the page in a browser:
tests/render/test_browser_pages.py."""

import json
from html.parser import HTMLParser

import jsonschema
import pytest

from grader.core.verdict import Diagnosis, Pitfall, Status
from grader.core.verdict_report import Case, Error, Report, Tolerance, WrongPart
from grader.instructor import class_report
from grader.instructor.class_report import Graded

SLUG = "rel_shift"


def failed(*, pitfall: str | None = None, diagnosis: str | None = None, part: str | None = None) -> Report:
    return Report(SLUG, Status.FAIL, "your output differs",
                  pitfall=Pitfall(pitfall, f"{pitfall} explained") if pitfall else None,
                  diagnosis=Diagnosis(diagnosis, f"{diagnosis} explained") if diagnosis else None,
                  first_wrong_part=WrongPart(part, f"{part} differs") if part else None)


def raised(kind: str) -> Report:
    error = Error(kind, "index 4 is out of bounds", "rel_shift.py", None, 7)
    case = Case("worked example", "rel_shift(x)", {}, None, (2, 2), None, Tolerance(True, 0, 0), None, None,
                False, None, error, None)
    return Report(SLUG, Status.ERROR, f"your function raised {kind}", counterexample=case)


def a_class() -> list[Graded]:
    """Ten submissions: three of one mistake, one of another (with a diagnosis too), a diagnosis alone, a
    wrong part, two of one exception and a missing file, a timeout, a pass, a failure nothing names."""
    reports = {
        "ada": failed(pitfall="pad_wrong_side"), "bo": failed(pitfall="pad_wrong_side"),
        "cy": failed(pitfall="pad_wrong_side"), "di": failed(pitfall="transposed", diagnosis="permuted"),
        "ed": failed(diagnosis="permuted"), "fa": failed(part="decoder_0/self_attn"),
        "gu": raised("IndexError"), "hu": raised("IndexError"),
        "io": Report.not_graded(SLUG, Status.ERROR, "no rel_shift.py in io"),
        "jo": Report.not_graded(SLUG, Status.ERROR, "no rel_shift.py in jo"),
        "ka": Report(SLUG, Status.TIMEOUT, "grading did not end within 50 s"),
        "lu": Report(SLUG, Status.PASS, "all checks passed"), "mo": failed(),
    }
    return [Graded(name, report, seconds) for seconds, (name, report) in enumerate(reversed(reports.items()), 1)]


@pytest.fixture(scope="module")
def summary():
    return class_report.summarize(SLUG, a_class())


def test_each_thing_is_counted_with_its_submissions_the_most_frequent_first(summary):
    assert summary.submissions == 13 and summary.passed == 1 and summary.pass_rate == pytest.approx(1 / 13)
    seen = lambda groups: [(g.id, g.count, g.students) for g in groups]  # noqa: E731
    assert seen(summary.mistakes) == [("pad_wrong_side", 3, ("ada", "bo", "cy")), ("transposed", 1, ("di",))]
    assert summary.mistakes[0].message == "pad_wrong_side explained"
    assert seen(summary.diagnoses) == [("permuted", 2, ("di", "ed"))]
    assert seen(summary.first_wrong_parts) == [("decoder_0/self_attn", 1, ("fa",))]
    assert seen(summary.errors) == [("IndexError", 2, ("gu", "hu")), ("no rel_shift.py in <student>", 2, ("io", "jo"))]
    assert summary.unexplained == ("mo",)
    assert seen(summary.statuses) == [("fail", 7, ("ada", "bo", "cy", "di", "ed", "fa", "mo")),
                                      ("error", 4, ("gu", "hu", "io", "jo")), ("pass", 1, ("lu",)),
                                      ("timeout", 1, ("ka",))]


def test_the_seconds_a_grade_took(summary):
    seconds = summary.seconds  # ada took 13 s, mo 1 s
    assert (seconds.median, seconds.max, seconds.total) == (7, 13, 91) and seconds.mean == pytest.approx(7)
    assert seconds.slowest == (("ada", 13), ("bo", 12), ("cy", 11), ("di", 10), ("ed", 9))


def test_summary_json_fits_its_schema_and_says_what_the_summary_says(summary):
    written = json.loads(class_report.to_json([summary]))
    jsonschema.Draft202012Validator.check_schema(class_report.SCHEMA)
    jsonschema.validate(written, class_report.SCHEMA)
    [problem] = written["problems"]
    assert (problem["problem"], problem["submissions"], problem["passed"]) == (SLUG, 13, 1)
    assert problem["mistakes"][0] == {"id": "pad_wrong_side", "message": "pad_wrong_side explained", "count": 3,
                                      "students": ["ada", "bo", "cy"]}
    assert [g["id"] for g in problem["errors"]] == ["IndexError", "no rel_shift.py in <student>"]
    assert problem["unexplained"] == ["mo"] and problem["seconds"]["slowest"][0] == {"student": "ada", "seconds": 13}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**written, "problems": [{**problem, "pass_rate": 2}]}, class_report.SCHEMA)


def test_the_picture_draws_a_bar_for_each_thing_that_went_wrong_the_most_frequent_at_the_top(summary):
    bars = class_report.bars(summary)
    assert bars[0] == ("mistake", "pad_wrong_side", 3)
    assert [count for _, _, count in bars] == sorted((count for _, _, count in bars), reverse=True)
    assert sorted(bars) == sorted([("mistake", "pad_wrong_side", 3), ("mistake", "transposed", 1),
                                   ("diagnosis", "permuted", 2), ("part", "decoder_0/self_attn", 1),
                                   ("error", "IndexError", 2), ("error", "no rel_shift.py in <student>", 2),
                                   ("timeout", "time limit", 1), ("not named", "failed, nothing named", 1)])

    [axes] = class_report.chart(summary).axes
    drawn = sorted(axes.patches, key=lambda bar: bar.get_y())  # the y axis is inverted: the smallest y on top
    assert [bar.get_width() for bar in drawn] == [count for _, _, count in bars]
    assert [t.get_text() for t in axes.get_yticklabels()] == [f"{kind}: {label}" for kind, label, _ in bars]
    assert axes.yaxis_inverted() and axes.get_xlim() == (0, 13)
    assert class_report.png(class_report.chart(summary))[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_class_that_all_passed_has_no_picture_and_a_page_all_the_same():
    summary = class_report.summarize(SLUG, [Graded("ada", Report(SLUG, Status.PASS, "ok"), 1.5)])
    assert class_report.bars(summary) == [] and class_report.chart(summary) is None
    page = class_report.page([summary])
    assert "<img" not in page and "1 of 1 submissions passed (100%)" in page


class Cells(HTMLParser):
    """The text of each table's cells, a list per row, tables in order."""

    def __init__(self, page: str):
        super().__init__()
        self.tables, self.row = [], None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.row = []
            self.tables[-1].append(self.row)

    def handle_data(self, data):
        if self.row is not None and data.strip():
            self.row.append(data)


def test_the_page_lists_the_mistakes_the_most_frequent_first_and_learner_text_as_text(summary):
    hostile = Graded("<b>eve</b>", failed(pitfall="pad_wrong_side"), 1.0)
    page = class_report.page([class_report.summarize(SLUG, [*a_class(), hostile])])
    assert "<b>eve</b>" not in page and "&lt;b&gt;eve&lt;/b&gt;" in page
    statuses, mistakes, *_ = Cells(page).tables
    assert mistakes[1][:3] == ["pad_wrong_side", "4", "<b>eve</b>, ada, bo, cy"]
    assert [row[0] for row in mistakes[1:]] == ["pad_wrong_side", "transposed"]
    assert page.count('src="data:image/png;base64,') == 1
