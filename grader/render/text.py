"""The one text rendering of a verdict. The command line, the notebook, exercism's and Gradescope's results
all print what :func:`render` writes, from the verdict's :class:`~grader.core.verdict_report.Report` (in-process its
arrays are whole NumPy arrays; read back from `--json` they are the first values, flat). Where each medium
differs, a :class:`Medium` says so.

Everything that came from learner code (printed output, exception types and messages, tracebacks, file
names, parameter paths) is untrusted: it passes through :func:`shown`, which writes control characters out
visibly, and it never starts a line at column 0, so a print cannot clear the screen or draw a fake verdict
line.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from grader.core.compare import Stage
from grader.core.cut import cut_middle
from grader.core.verdict_report import Case, Report, number
from grader.core.verdict import CheckKind, Isolation, Status

HEADLINES = {Status.PASS: "PASS", Status.FAIL: "FAIL", Status.ERROR: "ERROR", Status.TIMEOUT: "TIMEOUT",
             Status.NOT_STARTED: "NOT STARTED"}
ISOLATION_NOTE = ("Note: your code ran without isolation (this system refused namespaces), so it could have "
                  "changed files or processes of yours.")
WINDOW = 12  # rows and columns shown around the worst cell
TEXT_CAP = 8192  # characters kept of one string from learner code (a traceback, a message)
OUTPUT_CAP = 16384  # characters of printed output (the run layer keeps about 8 KB per worker already)
LINE_CAP = 512  # characters of one line of a list (parameter paths)
LINES_SHOWN = 40  # lines of the parameter tree's differences
PART_LINES = 60  # lines of what the first wrong part of a model shows (grids)
TRACEBACK_LINES = 60  # lines of a traceback (the worker already cuts it to about this, keeping the learner's frames)
PRINTED_SHOWN = 20  # lines of what the learner's code printed that a report shows (the last ones)
TRACER = re.compile(r"\b(?:Jit|Jvp|Batch|Linearize|DynamicJaxpr)?Tracer\b|Traced<")

# C0 and C1 controls but \t and \n, DEL, and the Unicode line separators and bidirectional overrides,
# which can move or hide text on a terminal.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_CONTROL_OR_NEWLINE = re.compile(f"[\n{_CONTROLS}]")


@dataclass(frozen=True)
class Medium:
    """Where a rendering goes, and what differs there."""

    name_problem: bool = True  # the verdict line starts with the problem's name (a platform's result has it)
    colour: bool = False  # the verdict's word in its ANSI colour (see colour_wanted)
    printed_lines: int = PRINTED_SHOWN  # of what the code printed, the last this many (0: none)
    replay_from: str | None = ""  # the replay line, run from this folder ("": the current one; None: no line)
    footer: bool = True  # "(N cases in S s)"
    isolation_note: bool = True  # whether it says that the code ran unconfined (on the reader's own machine)
    tail: tuple[str, ...] = ()  # the caller's own closing lines


COMMAND_LINE = Medium()
# A platform's result: the platform names the problem, and its reader has no checkout to replay in.
PLATFORM = Medium(name_problem=False, printed_lines=40, replay_from=None, footer=False, isolation_note=False)


# -- learner text -----------------------------------------------------------------------------------------

def cap(text: str | None, limit: int = TEXT_CAP) -> str | None:
    """``text`` cut in the middle to about ``limit`` characters (both ends say the most)."""
    return cut_middle(text, limit)


def shown(text: str, limit: int = TEXT_CAP, *, newlines: bool = False) -> str:
    """Learner-derived ``text`` as a report may show it: capped, with control characters written out
    (``\\x1b``, ``\\r``); line breaks are kept only where ``newlines`` (and escaped otherwise, so a one-line
    field stays one line)."""
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub(lambda m: ascii(m.group())[1:-1], cap(text, limit))


def capped_lines(lines: list[str], limit: int = LINES_SHOWN) -> list[str]:
    shown_lines = [cap(line, LINE_CAP) for line in lines[:limit]]
    return shown_lines + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


# ANSI colours of the verdict words: green for a pass, red for a failure or an error, yellow for the rest.
COLOURS = {Status.PASS: "32", Status.FAIL: "31", Status.ERROR: "31", Status.TIMEOUT: "33", Status.NOT_STARTED: "33"}


def colour_wanted(stream) -> bool:
    """Whether text written to ``stream`` gets colour: never where NO_COLOR is set to anything
    (https://no-color.org), always where FORCE_COLOR is (other than 0), else only on a terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force:
        return force.lower() not in ("0", "false", "no")
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def painted(text: str, status: Status | str) -> str:
    """``text`` in the colour of ``status`` (unchanged for a status without one)."""
    code = COLOURS.get(status)  # a Status is its value as a key
    return f"\x1b[{code}m{text}\x1b[0m" if code else text


# -- the report -------------------------------------------------------------------------------------------

def render(report: Report, medium: Medium = COMMAND_LINE) -> str:
    """The verdict as text: see :func:`sections`."""
    return "\n".join(line for section in sections(report, medium) for line in section)


def sections(report: Report, medium: Medium = COMMAND_LINE) -> Iterator[list[str]]:
    """The report's lines, a section at a time, in the order a learner reads them: the verdict line; what
    explains it (a known mistake, a diagnosis, the parameter tree, the first wrong part of a model); the
    case that shows it, with its inputs, and the expected and actual output or the traceback; what
    properties it breaks and the warnings; what the code printed; the replay command; the rest."""
    status = report.status
    yield [headline(report, medium)]
    explained = False
    if pitfall := report.pitfall:
        explained = True
        yield [f"Likely mistake ({pitfall.id}): {pitfall.message}"]
    if diagnosis := report.diagnosis:
        explained = True
        yield [f"Diagnosis: {shown(diagnosis.message)}"]
    if params := report.params_diff:  # under the verdict line, or a paragraph after an explanation
        yield [""] * explained + [f"  {shown(line)}" for line in params]  # cut to LINES_SHOWN in the report
    if part := report.first_wrong_part:
        yield ["", f"First wrong part: {shown(part.path, LINE_CAP) or 'the top-level module'}",
               f"  {shown(part.message)}",
               *(f"  {shown(line)}" for line in part.details)]  # cut to PART_LINES in the report
    case = report.counterexample if status != Status.NOT_STARTED else None
    if case:
        yield _case(case)
    checks = report.checks
    broken = [f"Property broken ({shown(c.name.removeprefix('property: '))}): {shown(c.message)}"
              for c in checks if c.kind == CheckKind.PROPERTY and c.status == Status.FAIL]
    if broken:
        yield ["", *broken]
    for check in checks:
        if check.status == Status.WARN:
            yield ["", f"Warning ({shown(check.name)}): {shown(check.message)}"]
    if medium.printed_lines:
        yield printed_section(report.output, medium.printed_lines)
    replay = case.replay if case else None
    if replay and medium.replay_from is not None and status != Status.PASS:
        where = f", from {medium.replay_from}" if medium.replay_from else ""
        yield ["", f"Replay just this case{where}: {shown(replay)}"]
    if medium.tail:
        yield ["", *medium.tail]
    graded = bool(report.examples_run or checks or report.duration_s)  # not a usage error's
    if graded and medium.isolation_note and report.isolation == Isolation.NONE:
        yield ["", ISOLATION_NOTE]
    if graded and medium.footer:
        run = report.examples_run
        yield [f"({run} case{'s' * (run != 1)} in {report.duration_s:.1f} s)"]


def headline(report: Report, medium: Medium = COMMAND_LINE, limit: int = TEXT_CAP) -> str:
    """``rmsnorm: FAIL - 3 of 16 values differ``: the verdict line (its message cut to ``limit``)."""
    return _headline(report.problem, report.status, report.message, medium, limit)


def _headline(problem: str | None, status: Status, message: str, medium: Medium, limit: int = TEXT_CAP) -> str:
    word = painted(HEADLINES[status], status) if medium.colour else HEADLINES[status]
    name = f"{shown(problem or '', LINE_CAP)}: " if medium.name_problem else ""
    return f"{name}{word} - {shown(message, limit)}"


class Streamed:
    """The verdict line printed as soon as the first failing input is known, before it is shrunk and explained;
    then the rest of the report. Where the case finally shown says something else than that first line (a
    smaller input, fewer wrong values), the rest starts by saying which case each count belongs to."""

    def __init__(self, problem: str, medium: Medium = COMMAND_LINE):
        self.problem, self.medium = problem, medium
        self.printed: tuple[Status, str] | None = None  # the status and message of the line printed

    def found(self, outcome) -> None:
        """Print the verdict line of ``outcome`` (a failing input's :class:`~grader.core.verdict.Outcome`)."""
        self.printed = Status(outcome.status), shown(outcome.message)
        print(_headline(self.problem, Status(outcome.status), outcome.message, self.medium), flush=True)

    def rest(self, report: Report) -> str:
        """The text report of ``report`` less what was printed already."""
        if self.printed is None:
            return render(report, self.medium)
        _, *sections_left = sections(report, self.medium)
        rest = "\n".join(line for section in sections_left for line in section)
        if self.printed == (report.status, shown(report.message)):
            return rest
        shown_below = headline(report, replace(self.medium, name_problem=False))
        return f"(That line is the first failing input's.) The case shown below: {shown_below}\n{rest}"


def printed_section(output: str, shown_lines: int = PRINTED_SHOWN) -> list[str]:
    """What the learner's code printed, as every report shows it: how many lines and which, the last
    ``shown_lines``; where it printed a traced value, how to see the numbers instead."""
    printed = shown(output, OUTPUT_CAP, newlines=True).strip()
    if not printed:
        return []
    said = printed.split("\n")
    count = f"{len(said)} line{'s' * (len(said) != 1)}"
    head = (f"Your code printed {count}:" if len(said) <= shown_lines
            else f"Your code printed {count}; the last {shown_lines}:")
    lines = ["", head, *(f"  | {line}" for line in said[-shown_lines:])]
    if TRACER.search(printed):
        lines += ["(Inside jax.jit, print shows a traced value, not numbers: use jax.debug.print(\"{}\", x), or grade "
                  "with --no-jit to run your function eagerly.)"]
    return lines


# -- the case ---------------------------------------------------------------------------------------------

def _case(case: Case) -> list[str]:
    lines = []
    if case.call:
        lines += ["", f"Called {shown(case.call)}"]
        for name, value in case.inputs.items():
            if isinstance(value, dict) and {"dtype", "shape", "data"} <= set(value):
                arr = np.asarray(value["data"], dtype=value["dtype"]).reshape(value["shape"])
                lines += [f"  {name} {arr.dtype.name}{list(arr.shape)} =",
                          *("    " + row for row in np.array2string(arr, precision=6, threshold=200).splitlines())]
    if case.error and case.error.traceback:
        lines += ["", *(f"  {line}" for line in _traceback_lines(case.error.traceback))]
    elif case.call and case.diff:
        lines += _comparison(case)
    return lines


def _traceback_lines(traceback: str) -> list[str]:
    """The worker's traceback, escaped; bounded again here, keeping its start and its end (the exception
    line), in case a worker sent more than it should."""
    lines = shown(traceback, newlines=True).split("\n")
    if len(lines) <= TRACEBACK_LINES:
        return lines
    head = TRACEBACK_LINES // 3
    tail = TRACEBACK_LINES - head - 1
    return lines[:head] + [f"... {len(lines) - head - tail} lines left out ..."] + lines[-tail:]


def _numbers(values) -> np.ndarray:
    """A report's values as an array: itself, or the first values, flat, as the JSON carries them."""
    if isinstance(values, np.ndarray):
        return values
    return np.asarray([number(v) if isinstance(v, str) else v for v in values or ()])


def array(values, shape) -> np.ndarray | None:
    """A report's values in ``shape``; None where they do not fill it (the JSON keeps only the first values
    of a large output)."""
    if values is None or shape is None:
        return None
    values = _numbers(values)
    return values.reshape(shape) if values.size == math.prod(shape) else None


def _comparison(case: Case) -> list[str]:
    diff, axes = case.diff, case.axes
    stage = Stage(diff.stage)
    expected = array(case.expected, case.expected_shape)
    if stage in (Stage.ARRAY, Stage.SHAPE, Stage.DTYPE):
        lines = ["", f"Problem: {shown(diff.message)}"]  # names the type learner code returned
        if stage != Stage.ARRAY:
            lines += ["", f"Expected {_shape_text(case.expected_shape)}:", *_values_grid(case, expected, None)]
        return lines
    actual = array(case.actual, case.actual_shape)
    mismatch = array(diff.mismatch, case.actual_shape)
    focus = diff.worst_index if diff.worst_index is not None else diff.first_index
    if expected is None or actual is None or mismatch is None:  # only the first values travelled
        lines = ["", f"Expected {_shape_text(case.expected_shape)} (the first values):",
                 *_flat(case.expected), "", "Got (the first values):", *_flat(case.actual)]
    else:
        width = max(_cell_width(expected), _cell_width(actual))
        lines = ["", f"Expected {_shape_text(expected.shape)}:", *_grid(expected, axes, focus, width=width),
                 "", "Got:", *_grid(actual, axes, focus, width=width),
                 "", "Mismatches (x):", *_grid(mismatch, axes, focus, width=width, mask_only=True)]
    summary = [f"{diff.mismatches} of {math.prod(case.expected_shape)} values wrong"]
    if diff.first_index is not None:
        summary.append(f"first at {_index_text(axes, diff.first_index)}")
    if diff.worst_index is not None and stage == Stage.VALUES and expected is not None and actual is not None:
        worst = diff.worst_index
        summary.append(f"worst at {_index_text(axes, worst)} (expected {expected[worst]:.7g}, got {actual[worst]:.7g})")
    lines += ["", "; ".join(summary) + "."]
    if mismatch is not None and mismatch.ndim > 2 and focus is not None:  # the grids show one slice: say where else
        lead = mismatch.ndim - 2
        wrong = sorted({tuple(int(i) for i in index[:lead]) for index in np.argwhere(mismatch)})
        named = ", ".join(f"[{', '.join(map(str, w))}, :, :]" for w in wrong[:8]) + (", ..." if len(wrong) > 8 else "")
        lines += [f"Slices with wrong values: {len(wrong)} of {math.prod(mismatch.shape[:lead])} ({named}); the grids "
                  f"above show [{', '.join(map(str, focus[:lead]))}, :, :]."]
    if stage == Stage.VALUES:
        tolerance = case.tolerance
        tol = ("exact match required" if tolerance.exact else
               f"tolerance |actual - expected| <= {tolerance.atol:g} + {tolerance.rtol:g}·|expected|")
        max_rel = number(diff.max_rel_error)
        rel = f"{max_rel:.3g}" if math.isfinite(max_rel) else "inf (an expected value is 0 where yours is not)"
        lines += [f"Largest absolute error {number(diff.max_abs_error):.3g}, largest relative error {rel}; {tol}."]
    return lines


def _values_grid(case: Case, expected: np.ndarray | None, focus) -> list[str]:
    if expected is None:
        return _flat(case.expected)
    return _grid(expected, case.axes, focus, width=_cell_width(expected))


def _flat(values) -> list[str]:
    arr = _numbers(values).reshape(-1)
    return ["  " + row for row in np.array2string(arr, precision=6, threshold=200, max_line_width=100).split("\n")]


def _shape_text(shape) -> str:
    return "(" + " × ".join(map(str, shape)) + ")"


def _index_text(axes: tuple[str, ...] | None, index) -> str:
    index = tuple(index)
    if axes and len(axes) == len(index):
        text = ", ".join(f"{n}={i}" for n, i in zip(axes, index))
        if tuple(axes) == ("i", "j"):
            text += f", j - i = {index[1] - index[0]}"
        return f"({text})"
    return str(index)


def _window(size: int, centre: int) -> tuple[int, int]:
    if size <= WINDOW:
        return 0, size
    start = min(max(centre - WINDOW // 2, 0), size - WINDOW)
    return start, start + WINDOW


def _cell(value, mask_only: bool) -> str:
    if mask_only:
        return "x" if value else "."
    if isinstance(value, (np.floating, float)) and float(value).is_integer() and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.6g}"


def _cell_width(arr: np.ndarray) -> int:
    sample = arr.reshape(-1)[:4096]
    return max((len(_cell(v, False)) for v in sample), default=1)


def _grid(arr: np.ndarray, axes: tuple[str, ...] | None, focus: tuple | None, *, width: int,
          mask_only: bool = False) -> list[str]:
    """Rows of a 1-D or 2-D view of ``arr`` (the slice holding ``focus`` for higher ranks), cropped to a
    window around ``focus``; rows and columns labelled with their indices (and ``axes``' names if given)."""
    focus = tuple(focus) if focus is not None else (0,) * arr.ndim
    lines = []
    if arr.ndim == 0:
        return ["  " + _cell(arr[()], mask_only)]
    if arr.ndim > 2:
        lead = focus[:-2]
        lines.append(f"  slice [{', '.join(map(str, lead))}, :, :]")
        arr, focus = arr[lead], focus[-2:]
    view = arr if arr.ndim == 2 else arr[None, :]
    fr, fc = focus if arr.ndim == 2 else (0, focus[0])
    r0, r1 = _window(view.shape[0], fr)
    c0, c1 = _window(view.shape[1], fc)
    names = axes if arr.ndim == 2 and axes and len(axes) == 2 else None
    width = max(width, len(str(c1 - 1)))
    labels = [f"{names[0]}={r}" if names else f"[{r}]" for r in range(r0, r1)] if arr.ndim == 2 else [""]
    label_width = max(len(label) for label in labels)
    pad = " " * (label_width + 3)
    left = "... " if c0 > 0 else ""  # columns hidden on the left, as " ..." marks those on the right
    head = pad + left + " ".join(str(c).rjust(width) for c in range(c0, c1))
    lines.append(head + (" ..." if c1 < view.shape[1] else "") + (f"  ({names[1]})" if names else ""))
    if r0 > 0:
        lines.append(pad + "...")
    for label, r in zip(labels, range(r0, r1)):
        row = " ".join(_cell(view[r, c], mask_only).rjust(width) for c in range(c0, c1))
        lines.append(f"  {label.rjust(label_width)} {left}{row}")
    if r1 < view.shape[0]:
        lines.append(pad + "...")
    return lines
