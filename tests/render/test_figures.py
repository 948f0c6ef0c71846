"""Figures of a verdict (grader/render/figures.py), read by their data: the arrays each panel draws are the
report's expected, actual and mismatch, titled and labelled as the report has them. Reports are built by
hand from the problems' worked examples, in-process; nothing here runs a worker."""

import dataclasses
import json

import numpy as np
import pytest

from grader.core.compare import compare
from grader.core.verdict import Outcome, Pitfall, Status, Verdict
from grader.core.verdict_report import Report, WrongPart
from grader.problem import problems
from grader.render import figures, formats, report, text

from conftest import ROOT

PNG = b"\x89PNG\r\n\x1a\n"


def load(slug):
    return problems.load(ROOT, slug)


def built(problem, actual, example=0, **verdict) -> Report:
    """The report of ``actual`` (in the natural shape) on the problem's example, as `grade` builds it from what
    an entry returns (its output, flat)."""
    ex = problem.examples[example]
    actual = actual.reshape(-1)
    c = compare(expected_flat=ex.expected.reshape(-1), natural_shape=problem.natural_shape(ex.args),
                dtype=problem.output_dtype, result={"type": "array"},
                spec={"dtype": actual.dtype.name, "shape": [actual.size]}, actual=actual,
                exact=problem.exact, rtol=problem.rtol, atol=problem.atol)
    outcome = Outcome(ex.name, ex.args, Status.FAIL, c.message, comparison=c, actual=actual)
    return report.build(problem, Verdict(problem.slug, Status.FAIL, c.message, counterexample=outcome, **verdict),
                        None)


def panels(drawn, column, group=""):
    return [p for p in drawn.panels if p.column == column and p.group == group]


def test_a_wrong_bias_is_drawn_per_head_beside_the_expected_one_on_one_scale():
    problem = load("t5_relative_bias")
    expected = problem.examples[0].expected  # (1, 2 heads, 3 queries, 5 keys)
    mirrored = np.ascontiguousarray(expected[..., ::-1])
    mistake = Pitfall("swapped_direction", "Your bias is the right one mirrored. More words.")
    r = built(problem, mirrored, pitfall=mistake)
    drawn = figures.failure(r)
    case = r.counterexample
    assert drawn.png.startswith(PNG)
    assert case.call in drawn.title.replace("\n", "") or drawn.title.endswith("...")
    assert drawn.caption == "Likely mistake (swapped_direction): Your bias is the right one mirrored."
    heads = expected.shape[1]
    for column, whole in ((figures.EXPECTED, case.expected), (figures.YOURS, case.actual),
                          (figures.DIFFER, case.diff.mismatch)):
        drawn_here = panels(drawn, column)
        assert [p.row for p in drawn_here] == [f"head {h}" for h in range(heads)]  # every head, a row each
        for h, panel in enumerate(drawn_here):
            assert np.array_equal(panel.data, whole[0, h]) and panel.kind == "heatmap"
            assert (panel.xlabel.split()[0], panel.ylabel) == tuple(case.axes[-2:])[::-1]
    assert "j - i" in panels(drawn, figures.EXPECTED)[0].xlabel  # the axes are i and j
    images = [ax.images[0] for ax in drawn.figure.axes if ax.images]
    scales = {(im.norm.vmin, im.norm.vmax) for im in images if im.get_cmap().name != "mismatch"}
    assert scales == {(float(min(expected.min(), mirrored.min())), float(max(expected.max(), mirrored.max())))}


def test_buckets_are_drawn_in_a_colour_each():
    problem = load("t5_relative_pos")
    expected = problem.examples[0].expected
    wrong = expected.copy()
    wrong[0, -1] += 1
    drawn = figures.failure(built(problem, wrong))
    heatmaps = panels(drawn, figures.EXPECTED) + panels(drawn, figures.YOURS)
    assert all(p.discrete for p in heatmaps)
    levels = np.unique(np.concatenate([expected.ravel(), wrong.ravel()]))
    norm = next(ax.images[0].norm for ax in drawn.figure.axes if ax.images)
    assert norm.Ncmap == levels.size and np.array_equal(norm.boundaries, np.append(levels - 0.5, levels[-1] + 0.5))


def test_a_1d_output_is_drawn_as_lines_and_other_shapes_apart():
    problem = load("t5_relative_pos")
    r = built(problem, problem.examples[0].expected.copy())
    flat = np.linspace(0, 1, 6, dtype=np.float32)
    case = dataclasses.replace(r.counterexample, expected=flat, expected_shape=(6,), actual=flat[::-1].copy(),
                               actual_shape=(6,), diff=dataclasses.replace(r.counterexample.diff,
                                                                            mismatch=flat != flat[::-1]))
    drawn = figures.failure(dataclasses.replace(r, counterexample=case))
    lines = panels(drawn, figures.YOURS)
    assert [p.kind for p in lines] == ["line"] and np.array_equal(lines[0].data, flat[::-1])
    ax = next(ax for ax in drawn.figure.axes if ax.get_title() == figures.YOURS)
    assert np.array_equal(ax.lines[0].get_ydata(), flat[::-1])

    other = dataclasses.replace(case, actual=np.zeros((2, 3), np.float32), actual_shape=(2, 3), diff=None)
    apart = figures.failure(dataclasses.replace(r, counterexample=other))
    assert not panels(apart, figures.DIFFER) and panels(apart, figures.YOURS)[0].data.shape == (2, 3)
    assert apart.notes == ("Your output has shape (2, 3) where (6,) is expected: the two are drawn apart, not "
                           "compared cell by cell.",)


def test_the_first_wrong_part_is_drawn_in_process_and_never_written_to_the_json():
    problem = load("t5_relative_bias")
    expected = problem.examples[0].expected
    buckets = np.arange(15, dtype=np.int32).reshape(3, 5) % 4
    part = WrongPart("relative_position_bucket", "your relative_position_bucket differs.", ("a grid",),
                     expected=buckets, actual=buckets[::-1].copy(), mismatch=buckets != buckets[::-1])
    r = dataclasses.replace(built(problem, np.ascontiguousarray(expected[..., ::-1])), first_wrong_part=part)
    drawn = figures.failure(r)
    drawn_part = panels(drawn, figures.YOURS, group="relative_position_bucket")
    assert len(drawn_part) == 1 and np.array_equal(drawn_part[0].data, buckets[::-1]) and drawn_part[0].discrete
    assert np.array_equal(panels(drawn, figures.DIFFER, group="relative_position_bucket")[0].data,
                          buckets != buckets[::-1])
    without = dataclasses.replace(r, first_wrong_part=r.first_wrong_part.flat())
    assert r.to_json() == without.to_json()  # the JSON carries no part arrays
    assert "expected" not in json.loads(r.to_json())["first_wrong_part"]
    assert r.wire().first_wrong_part.actual is None and Report.from_json(r.to_json()) == r.wire()
    assert not panels(figures.failure(Report.from_json(r.to_json())), figures.YOURS, group="relative_position_bucket")


def test_a_report_read_back_from_json_draws_the_same_arrays():
    problem = load("rel_shift")
    expected = problem.examples[0].expected
    r = built(problem, expected.T.copy())
    here, there = figures.failure(r), figures.failure(Report.from_json(r.to_json()))
    assert [(p.column, p.kind) for p in here.panels] == [(p.column, p.kind) for p in there.panels]
    assert all(np.array_equal(a.data, b.data) for a, b in zip(here.panels, there.panels))
    assert (here.title, here.caption) == (there.title, there.caption)


def test_the_html_format_is_one_page_with_the_figure_and_the_text_report():
    problem = load("rel_shift")
    r = built(problem, problem.examples[0].expected.T.copy())
    page = formats.FORMATS["html"].write(r)
    assert formats.FORMATS["html"].to_file
    assert page.count("<img ") == 1 and 'src="data:image/png;base64,' in page
    assert "Mismatches (x):" in page and "http" not in page.split("<body", 1)[1]
    nothing = formats.FORMATS["html"].write(Report.not_graded("rel_shift", Status.ERROR, "no file at x.py"))
    assert "<img " not in nothing and "no file at x.py" in nothing
