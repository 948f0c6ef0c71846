"""Figures of a verdict: what a learner would rather look at than read. A failure is drawn expected | yours |
where they differ, side by side, the first two on one colour scale, titled with the failing call and
captioned with the named mistake or diagnosis (:func:`failure`); a worked example that ran, expected |
yours (:func:`example`).

How an output is drawn follows its shape, leading axes of size 1 left out: a 2-D one as heatmaps, rows and
columns labelled with the problem's ``axes`` (where they are ``i`` and ``j``, the diagonal j - i = 0
dotted in, as the text report adds j - i to an index); a 3-D one (heads x queries x keys) as one row of
small multiples per head, every head; a 1-D one as lines; integer outputs (buckets) in discrete colours.
An answer of another shape is drawn apart from the expected one, with a note. The first wrong part of a
model is drawn the same way, below, where its arrays are known (in-process: the JSON does not carry them).

Matplotlib is imported only here, inside the functions, with its Agg backend and no pyplot (no global
figure state): a grading that draws nothing imports none of it. Each function returns a :class:`Drawn`:
the Figure, its PNG, and what each panel holds, which is how the tests read a figure.
"""

from __future__ import annotations

import dataclasses
import io
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from grader.core.verdict_report import Case, Report, WrongPart
from grader.render import text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROWS_DRAWN = 16  # rows of small multiples (heads, or slices) one figure draws at most
LEVELS = 24  # an integer output with at most this many distinct values gets a colour each
TITLE_CHARS = 110  # characters of the call in a title
CHARS_PER_INCH = 13  # of a title's or caption's line (9-point text)
CAPTION_CHARS = 400  # characters of a caption
DPI = 90
CELL_INCHES = 2.3  # the width of one panel; a row of them is about as tall
EXPECTED, YOURS, DIFFER = "expected", "yours", "where they differ"
MASK_COLOURS = ("#f6f8fa", "#cf222e")  # right, wrong
MISSING = "#b0b0b0"  # NaN


@dataclass(frozen=True)
class Panel:
    """One drawing in a figure, as drawn: for the tests, which read a figure by its data."""

    column: str  # EXPECTED, YOURS or DIFFER
    row: str  # which slice: "head 1", or "" where there is one
    data: np.ndarray  # the values drawn (a mismatch mask for DIFFER)
    kind: str  # "heatmap" or "line"
    xlabel: str
    ylabel: str
    discrete: bool = False  # integer values, one colour each
    group: str = ""  # "" for the failing call, else the wrong part's path


@dataclass(frozen=True)
class Drawn:
    """A figure: the Figure, its PNG bytes, and what it shows."""

    figure: Figure
    png: bytes
    title: str
    caption: str
    panels: tuple[Panel, ...]
    notes: tuple[str, ...]  # what is said under a group (shapes drawn apart, slices left out)


@dataclass(frozen=True)
class _Group:
    """Arrays to draw together, in their natural shapes: a case's, or a wrong part's."""

    name: str  # "" for the failing call
    heading: str
    expected: np.ndarray
    actual: np.ndarray | None
    mismatch: np.ndarray | None
    axes: tuple[str, ...] | None


def failure(report: Report) -> Drawn | None:
    """The figure of ``report``'s failure: its counterexample's expected | yours | where they differ, then
    its first wrong part's where the arrays are known. None where there is nothing to draw (no output came
    back to compare, or the JSON carried only the first values of a large one)."""
    groups = []
    case = report.counterexample
    if case is not None and case.call:
        group = _case_group(case, "")
        if group is not None:
            groups.append(group)
    part = report.first_wrong_part
    if part is not None and part.expected is not None and not (groups and _same(groups[0].expected, part.expected)):
        groups.append(_part_group(part))  # (a part whose output is the call's, the top level, is drawn once)
    if not groups:
        return None
    title = f"{report.problem}: {text.HEADLINES[report.status]}"
    if case is not None and case.call:
        title += f" - {_cut(case.call, TITLE_CHARS)}"
    return _draw(groups, title, caption(report))


def example(case: Case, status_word: str = "") -> Drawn | None:
    """A worked example: its expected output beside the learner's (where it ran), as :func:`failure` draws
    a case; ``status_word`` (PASS, FAIL) leads the title. None where its expected output is not known whole."""
    group = _case_group(case, "")
    if group is None:
        return None
    said = case.diff.message if case.diff is not None and case.diff.mismatches else ""
    if not said:  # nothing differs: the two side by side
        group = dataclasses.replace(group, mismatch=None)
    title = f"{status_word + ' - ' if status_word else ''}{_cut(case.call or case.name, TITLE_CHARS)}"
    return _draw([group], title, _cut(said or case.name, CAPTION_CHARS))


def caption(report: Report) -> str:
    """What a figure says under its title: the named mistake, else the diagnosis, else the verdict's message."""
    if report.pitfall is not None:
        said = f"Likely mistake ({report.pitfall.id}): {_first_sentence(report.pitfall.message)}"
    elif report.diagnosis is not None:
        said = f"Diagnosis: {_first_sentence(text.shown(report.diagnosis.message))}"
    else:
        said = text.shown(report.message)
    return _cut(said, CAPTION_CHARS)


# -- what is drawn -----------------------------------------------------------------------------------------

def _case_group(case: Case, name: str) -> _Group | None:
    expected = text.array(case.expected, case.expected_shape)
    if expected is None:
        return None
    actual = text.array(case.actual, case.actual_shape)
    mismatch = text.array(case.diff.mismatch, case.actual_shape) if case.diff is not None else None
    return _Group(name, "", expected, actual, mismatch, case.axes)


def _part_group(part: WrongPart) -> _Group:
    where = text.shown(part.path, text.LINE_CAP) or "the top-level module"
    return _Group(part.path or "(top level)", f"First wrong part: {where}", np.asarray(part.expected),
                  None if part.actual is None else np.asarray(part.actual),
                  None if part.mismatch is None else np.asarray(part.mismatch), None)


def _same(a: np.ndarray, b) -> bool:
    b = np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _squeezed(arr: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
    """``arr`` without its leading axes of size 1 (a batch of one), and their names."""
    while arr.ndim > 1 and arr.shape[0] == 1:
        arr, names = arr[0], names[1:]
    return arr, names


def _names(axes: tuple[str, ...] | None, ndim: int) -> list[str]:
    return list(axes) if axes is not None and len(axes) == ndim else [f"axis {k}" for k in range(ndim)]


def _slices(arr: np.ndarray, names: list[str]) -> list[tuple[str, np.ndarray]]:
    """``arr`` as the 1-D or 2-D pieces a row each shows: itself, or one per index of its leading axes."""
    if arr.ndim <= 2:
        return [("", arr.reshape(-1) if arr.ndim == 0 else arr)]
    lead = arr.shape[:-2]
    if all(n.startswith("axis ") for n in names[:len(lead)]):  # unnamed: the slice, as the text report says it
        return [(f"[{', '.join(map(str, index))}, :, :]", arr[index]) for index in np.ndindex(*lead)]
    return [(", ".join(f"{n} {i}" for n, i in zip(names, index)), arr[index]) for index in np.ndindex(*lead)]


def _rows(group: _Group) -> tuple[list[tuple[str, dict[str, np.ndarray]]], list[str], list[str]]:
    """The rows of ``group`` (a label, and what each column draws), the names of the drawn axes, and notes."""
    expected, names = _squeezed(group.expected, _names(group.axes, group.expected.ndim))
    actual = group.actual
    notes = []
    same = actual is not None and actual.shape == group.expected.shape
    if same:
        actual = _squeezed(actual, list(names))[0].reshape(expected.shape)
    columns = {EXPECTED: _slices(expected, names)}
    if actual is not None and same:
        columns[YOURS] = _slices(actual, names)
        if group.mismatch is not None:
            columns[DIFFER] = _slices(np.asarray(group.mismatch, dtype=bool).reshape(expected.shape), names)
    elif actual is not None:
        theirs, their_names = _squeezed(actual, [f"axis {k}" for k in range(actual.ndim)])
        columns[YOURS] = _slices(theirs, their_names)
        notes.append(f"Your output has shape {tuple(actual.shape)} where {tuple(group.expected.shape)} is "
                     f"expected: the two are drawn apart, not compared cell by cell.")
    count = max(len(v) for v in columns.values())
    if count > ROWS_DRAWN:
        notes.append(f"The first {ROWS_DRAWN} of {count} slices are drawn.")
    rows = []
    for r in range(min(count, ROWS_DRAWN)):
        cells = {column: pieces[r][1] for column, pieces in columns.items() if r < len(pieces)}
        label = next(pieces[r][0] for pieces in columns.values() if r < len(pieces))
        rows.append((label, cells))
    return rows, names[-2:] if expected.ndim >= 2 else names[-1:], notes


def _discrete(*arrays: np.ndarray | None) -> np.ndarray | None:
    """The values to give a colour each, where every value is an integer (buckets) and there are few of them."""
    present = [np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays if a is not None and a.size]
    values = np.concatenate(present) if present else np.zeros(0)
    if not values.size or not np.isfinite(values).all() or (values != np.rint(values)).any():
        return None
    levels = np.unique(values).astype(np.int64)
    return levels if levels.size <= LEVELS else None


def _scale(*arrays: np.ndarray | None) -> tuple[float, float]:
    finite = [a[np.isfinite(a)] for a in (np.asarray(x, dtype=np.float64) for x in arrays if x is not None)]
    values = np.concatenate([f.reshape(-1) for f in finite]) if finite else np.zeros(0)
    if not values.size:
        return -1.0, 1.0
    low, high = float(values.min()), float(values.max())
    return (low - 0.5, high + 0.5) if low == high else (low, high)


# -- drawing ---------------------------------------------------------------------------------------------------

class _Place:
    """Where things go on a figure, in inches from its top left (no layout engine: it costs more than the
    drawing), turned into the figure's fractions."""

    def __init__(self, columns: int, height: float):
        self.width = LEFT + columns * (CELL_INCHES + GAP) + BAR
        self.height = height

    def box(self, left: float, top: float, width: float, height: float) -> list[float]:
        return [left / self.width, 1 - (top + height) / self.height, width / self.width, height / self.height]


LEFT, GAP, BAR = 0.85, 0.3, 0.7  # inches: the row labels, between panels, the colour bar
ROW, LINE = 1.75, 0.17  # inches: a row of panels with its ticks, a line of text


def _draw(groups: list[_Group], title: str, said: str) -> Drawn:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    laid = [(group, *_rows(group)) for group in groups]
    columns = max(len({c for _, cells in rows for c in cells}) for _, rows, _, _ in laid)
    width = _Place(columns, 1).width
    head = f"{_wrap(title, width)}\n{_wrap(said, width)}"
    top = (head.count("\n") + 1) * LINE + 0.2
    heights = [LINE * 2 * bool(group.heading) + 0.3 + len(rows) * ROW + 0.2
               + sum(_wrap(note, width).count("\n") + 1 for note in notes) * LINE for group, rows, _, notes in laid]
    place = _Place(columns, top + sum(heights) + 0.1)
    figure = Figure(figsize=(place.width, place.height), dpi=DPI)
    FigureCanvasAgg(figure)
    figure.text(0.1 / place.width, 1 - 0.1 / place.height, head, fontsize=9, va="top")
    panels: list[Panel] = []
    for height, (group, rows, names, notes) in zip(heights, laid):
        panels += _draw_group(figure, place, top, group, rows, names, notes, columns)
        top += height
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return Drawn(figure, buffer.getvalue(), title, said, tuple(panels),
                 tuple(note for _, _, _, notes in laid for note in notes))


def _draw_group(figure, place: _Place, top: float, group: _Group, rows, names: list[str], notes: list[str],
                columns: int) -> list[Panel]:
    from matplotlib import colormaps
    from matplotlib.colors import BoundaryNorm, ListedColormap, Normalize

    if group.heading:
        figure.text(0.1 / place.width, 1 - (top + LINE) / place.height, group.heading, fontsize=9, weight="bold")
        top += 2 * LINE
    top += 0.3  # the columns' titles
    values = [cells.get(c) for _, cells in rows for c in (EXPECTED, YOURS)]
    levels = _discrete(*values)
    if levels is not None:
        cmap = ListedColormap(colormaps["tab20" if levels.size > 10 else "tab10"].colors[:levels.size])
        norm = BoundaryNorm(np.append(levels - 0.5, levels[-1] + 0.5), levels.size)
    else:
        cmap, norm = colormaps["viridis"].with_extremes(bad=MISSING), Normalize(*_scale(*values))
    mask_map = ListedColormap(MASK_COLOURS, name="mismatch")
    ij = names == ["i", "j"]
    xlabel = names[-1] + ("  (dotted: j - i = 0)" if ij else "") if names else ""
    ylabel = names[0] if len(names) == 2 else ""
    wrong = sum(int(cells[DIFFER].sum()) for _, cells in rows if DIFFER in cells)
    drawn, shown = [], None
    for r, (label, cells) in enumerate(rows):
        for c, column in enumerate((EXPECTED, YOURS, DIFFER)[:columns]):
            data = cells.get(column)
            if data is None:
                continue
            ax = figure.add_axes(place.box(LEFT + c * (CELL_INCHES + GAP), top + r * ROW, CELL_INCHES, ROW - 0.45))
            if r == 0:
                ax.set_title(column + (f" ({wrong}, in red)" if column == DIFFER else ""), fontsize=9)
            ax.tick_params(labelsize=7)
            if data.ndim == 1:
                _line(ax, data, cells, column, norm if levels is None else None)
                kind = "line"
            else:
                image = ax.imshow(data.astype(np.float64 if column != DIFFER else np.uint8), aspect="auto",
                                  interpolation="nearest", **({"cmap": mask_map, "vmin": 0, "vmax": 1}
                                                              if column == DIFFER else {"cmap": cmap, "norm": norm}))
                shown = image if column != DIFFER else shown
                if ij:  # (the limits kept: the image's)
                    n, limits = min(data.shape), (ax.get_xlim(), ax.get_ylim())
                    ax.plot([-0.5, n - 0.5], [-0.5, n - 0.5], ":", color="white", linewidth=0.8)
                    ax.set_xlim(limits[0])
                    ax.set_ylim(limits[1])
                _integer_ticks(ax, x=r == len(rows) - 1, y=c == 0)  # (ticks cost: on the outer panels only)
                kind = "heatmap"
            if c == 0:
                ax.set_ylabel(f"{label}\n{ylabel}" if label and ylabel else label or ylabel, fontsize=8)
            if r == len(rows) - 1:
                ax.set_xlabel(xlabel, fontsize=8)
            drawn.append(Panel(column, label, data, kind, xlabel, ylabel if data.ndim == 2 else "",
                               levels is not None and column != DIFFER, group.name))
    if shown is not None:
        bar = figure.colorbar(shown, cax=figure.add_axes(place.box(place.width - BAR + 0.1, top, 0.15,
                                                                    len(rows) * ROW - 0.45)))
        bar.ax.tick_params(labelsize=7)
        if levels is not None:
            bar.set_ticks(levels)
    if notes:
        figure.text(0.1 / place.width, 1 - (top + len(rows) * ROW + 0.1) / place.height,
                    "\n".join(_wrap(n, place.width) for n in notes), fontsize=8, va="top")
    return drawn


def _line(ax, data: np.ndarray, cells: dict, column: str, norm) -> None:
    """A 1-D output as a line (on the shared scale); where they differ, the wrong values marked on both lines."""
    index = np.arange(data.size)
    if column == DIFFER:
        for other, colour in ((EXPECTED, "#57606a"), (YOURS, "#0969da")):
            ax.plot(index, cells[other], color=colour, linewidth=1, label=other)
        wrong = np.flatnonzero(data)
        ax.plot(wrong, cells[YOURS][wrong], "x", color=MASK_COLOURS[1], label="wrong")
        ax.legend(fontsize=6, loc="best")
    else:
        ax.plot(index, data, marker=".", color="#0969da" if column == YOURS else "#57606a", linewidth=1)
    if norm is not None:
        pad = 0.05 * (norm.vmax - norm.vmin)
        ax.set_ylim(norm.vmin - pad, norm.vmax + pad)
    _integer_ticks(ax, y=None)


def _integer_ticks(ax, x: bool = True, y: bool | None = True) -> None:
    """Ticks on whole indices (every one where there are few) where ``x`` and ``y``; none where False; the
    value axis of a line (``y=None``) as it is."""
    from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator

    for axis, limits, wanted in ((ax.xaxis, ax.get_xlim(), x), (ax.yaxis, ax.get_ylim(), y)):
        if wanted is None:
            continue
        size = round(abs(limits[1] - limits[0]))
        axis.set_major_locator(NullLocator() if not wanted else FixedLocator(range(size)) if size <= 8
                               else MaxNLocator(integer=True, nbins=6))


# -- words -----------------------------------------------------------------------------------------------------

def _cut(said: str, limit: int) -> str:
    said = text.shown(said)
    return said if len(said) <= limit else said[:limit - 3] + "..."


def _first_sentence(said: str) -> str:
    head, dot, _ = said.partition(". ")
    return head + "." if dot else said


def _wrap(said: str, inches: float) -> str:
    """``said`` in lines that fit a figure ``inches`` wide."""
    chars = max(40, int(inches * CHARS_PER_INCH))
    return "\n".join(line for part in said.split("\n")
                     for line in textwrap.wrap(_cut(part, CAPTION_CHARS), chars)) or " "
