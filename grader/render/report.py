"""Turn a verdict into the learner's report: a short text for people, one JSON object for programs.

Everything that came from learner code (printed output, exception types and messages, tracebacks,
file names, parameter paths, the type of a returned value) is untrusted. In the text it passes through
:func:`shown`, which writes control characters out visibly, and it never starts a line at column 0,
so a print cannot clear the screen or draw a fake verdict line. In the JSON, json.dumps escapes it;
there every learner-sized piece is capped so that the object stays under :data:`MAX_JSON_CHARS`.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import numpy as np

from grader.problem.problems import Problem, relative
from grader.problem.cases import case_to_json
from grader.core.verdict import Outcome, Status, Verdict

WINDOW = 12  # rows and columns shown around the worst cell
HEADLINES = {Status.PASS: "PASS", Status.FAIL: "FAIL", Status.ERROR: "ERROR", Status.TIMEOUT: "TIMEOUT",
             Status.NOT_STARTED: "NOT STARTED"}
ISOLATION_NOTE = ("Note: your code ran without isolation (this system refused namespaces), so it could have "
                  "changed files or processes of yours.")

VALUES_SHOWN = 4096  # values of one array a JSON report carries
TEXT_CAP = 8192  # characters kept of one string from learner code (a traceback, a message)
OUTPUT_CAP = 16384  # characters of printed output (the run layer keeps about 8 KB per worker already)
LINE_CAP = 512  # characters of one line of a list (parameter paths)
LINES_SHOWN = 40  # lines of the parameter tree's differences
PART_LINES = 60  # lines of what the first wrong part of a model shows (grids)
TRACEBACK_LINES = 60  # lines of a traceback (the worker already cuts it to about this, keeping the learner's frames)
MAX_JSON_CHARS = 1 << 20  # --json prints fewer characters than this, whatever learner code did

# C0 and C1 controls but \t and \n, DEL, and the Unicode line separators and bidirectional overrides,
# which can move or hide text on a terminal.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_CONTROL_OR_NEWLINE = re.compile(f"[\n{_CONTROLS}]")


# -- the JSON schema ------------------------------------------------------------------------------------

_TEXT = {"type": "string"}
_SHAPE = {"type": "array", "items": {"type": "integer", "minimum": 0}}
_NUMBER = {"anyOf": [{"type": "number"}, {"enum": ["NaN", "Infinity", "-Infinity"]}],
           "description": "a number; non-finite values as the strings NaN, Infinity, -Infinity"}
_VALUES = {"type": "array", "maxItems": VALUES_SHOWN, "items": _NUMBER,
           "description": f"the array's values, flat in C order, at most the first {VALUES_SHOWN}"}


def _nullable(schema: dict) -> dict:
    return {"anyOf": [{"type": "null"}, schema]}


def _record(description: str, **properties) -> dict:
    return {"type": "object", "description": description, "properties": properties,
            "required": list(properties), "additionalProperties": False}


SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "grade --json", **_record(
    "What `grade <problem> --json` prints: exactly one object, for a verdict or a usage error.",
    problem=_nullable(_TEXT),
    status={"enum": [s.value for s in HEADLINES]},
    message=_TEXT,
    isolation={"enum": ["namespaces", "user", "none"],
               "description": "how learner code was confined: namespaces; user (the kernel refused them, and "
                              "root's grader ran it as an unprivileged user); none, also when no code ran "
                              "(a usage error)"},
    checks={"type": "array", "items": _record(
        "a phase of the run, or a diagnostic", name=_TEXT, status={"enum": [s.value for s in Status]},
        message=_TEXT)},
    counterexample=_nullable(_record(
        "the input that shows the failure, shrunk, and what happened on it",
        name=_TEXT,
        call=_TEXT,
        inputs={"type": "object", "description": "argument name -> its case-file form (grader.core.kinds); \"@moved\": "
                                                 "true where the parameters were moved from their initial values"},
        expected=_nullable(_VALUES),
        expected_shape=_SHAPE,
        actual=_nullable(_VALUES),
        actual_shape=_nullable({**_SHAPE, "description": "the natural shape where the answer could be "
                                "compared cell by cell, else the shape of what came back"}),
        actual_truncated={"type": "boolean"},
        diff=_nullable(_record(
            "the staged comparison", stage={"enum": ["array", "shape", "dtype", "finite", "values"]},
            message=_TEXT, mismatches={"type": "integer", "minimum": 0},
            first_index=_nullable(_SHAPE), worst_index=_nullable(_SHAPE),
            max_abs_error=_NUMBER, max_rel_error=_NUMBER)),
        error=_nullable(_record(
            "the exception learner code raised", type=_nullable(_TEXT), message=_nullable(_TEXT),
            file=_nullable(_TEXT), line=_nullable({"type": "integer"}), traceback=_nullable(_TEXT))),
        replay=_nullable({**_TEXT, "description": "a command that runs just this case"}),
    )),
    pitfall=_nullable(_record("the known mistake the outputs match", id=_TEXT, message=_TEXT)),
    diagnosis=_nullable(_record("what the relation between the expected and the actual output says, with "
                                "no known mistake needed", id=_TEXT, message=_TEXT)),
    first_wrong_part=_nullable(_record(
        "the first module of the model, in execution order, whose output differs when it runs on the "
        "reference's parameters and inputs", path={**_TEXT, "description": "its path in the module tree"},
        message=_TEXT)),
    params_diff={"type": "array", "items": _TEXT},
    examples_run={"type": "integer", "minimum": 0},
    duration_s={"type": "number", "minimum": 0},
    output=_TEXT,
)}


def replay_command(problem: Problem, path: Path, learner_file: Path | None) -> str:
    words = [*program(), problem.slug]
    if learner_file is not None:
        words += ["--file", relative(learner_file)]
    words += ["--replay", relative(path)]
    return shlex.join(words)


def program() -> list[str]:
    """The command as the user ran it, so that a printed one can be pasted as it is: ``grade`` where the
    PATH finds the same file, else the path they typed (``.venv/bin/grade``), or ``<python> -m
    grader.cli``. Called in-process by anything else (tests, benchmarks): ``grade``."""
    ran = sys.argv[0] if sys.argv else ""
    if ran and _same_file(ran, Path(__file__).parents[1] / "cli.py"):
        python = sys.orig_argv[0] if sys.orig_argv else sys.executable
        # A bare name was found on the PATH and will be again; a path is kept as a path (a virtual
        # environment's python is a link to the system's, so resolving it would lose the environment).
        return [python if os.sep not in python else _typed_path(python), "-m", "grader.cli"]
    if os.path.basename(ran) != "grade":
        return ["grade"]
    found = shutil.which("grade")
    return ["grade" if found and _same_file(found, ran) else _typed_path(ran)]


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _typed_path(path: str) -> str:
    """``path`` relative to the current folder when it lies below it (with ``./`` where it would read as a
    bare name, which the shell looks up on the PATH instead), else absolute."""
    shown = relative(os.path.abspath(path))
    return shown if os.sep in shown else os.path.join(".", shown)


# -- JSON -----------------------------------------------------------------------------------------------

def cap(text: str | None, limit: int = TEXT_CAP) -> str | None:
    """``text`` cut in the middle to about ``limit`` characters (both ends say the most)."""
    if text is None or len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]} [... {len(text) - 2 * keep} characters left out ...] {text[-keep:]}"


def _number(x) -> float | int | str:
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def _values(arr: np.ndarray | None) -> tuple[list | None, bool]:
    """The first VALUES_SHOWN values of ``arr``, flat, and whether that is fewer than it has."""
    if arr is None:
        return None, False
    return [_number(v) for v in arr.flat[:VALUES_SHOWN].tolist()], arr.size > VALUES_SHOWN


def _lines(lines: list[str], limit: int = LINES_SHOWN) -> list[str]:
    shown = [cap(line, LINE_CAP) for line in lines[:limit]]
    return shown + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


def counterexample_json(problem: Problem, outcome: Outcome | None, replay: str | None) -> dict | None:
    if outcome is None or not outcome.args or outcome.status == Status.NOT_STARTED:
        return None
    comparison = outcome.comparison
    actual = comparison.actual if comparison is not None and comparison.actual is not None else outcome.actual
    actual_values, truncated = _values(actual)
    diff = None
    if comparison is not None:
        diff = comparison.summary()
        diff.update(message=cap(diff["message"]), max_abs_error=_number(diff["max_abs_error"]),
                    max_rel_error=_number(diff["max_rel_error"]))
    error = None
    if outcome.error:
        error = {k: cap(outcome.error.get(k)) for k in ("type", "message", "file", "traceback")}
        error["line"] = outcome.error.get("line")
    return {
        "name": cap(outcome.name),
        "call": cap(problem.call_text(outcome.args)),
        "inputs": case_to_json(problem, outcome.args),
        "expected": _values(comparison.expected)[0] if comparison is not None else None,
        "expected_shape": list(problem.natural_shape(outcome.args)),
        "actual": actual_values,
        "actual_shape": list(actual.shape) if actual is not None else None,
        "actual_truncated": truncated,
        "diff": diff,
        "error": error,
        "replay": replay,
    }


def to_json(problem: Problem, verdict: Verdict, replay: str | None) -> str:
    return _dumps({
        "problem": verdict.problem,
        "status": Status(verdict.status).value,
        "message": cap(verdict.message),
        "isolation": verdict.isolation,
        "checks": [{"name": cap(c.name, LINE_CAP), "status": Status(c.status).value, "message": cap(c.message)}
                   for c in verdict.checks],
        "counterexample": counterexample_json(problem, verdict.counterexample, replay),
        "pitfall": {"id": verdict.pitfall.id, "message": verdict.pitfall.message} if verdict.pitfall else None,
        "diagnosis": ({"id": cap(verdict.diagnosis.id, LINE_CAP), "message": cap(verdict.diagnosis.message)}
                      if verdict.diagnosis else None),
        "first_wrong_part": ({"path": cap(part.path, LINE_CAP), "message": cap(part.message)}
                             if (part := verdict.first_wrong_part) else None),
        "params_diff": _lines(verdict.params_diff),
        "examples_run": verdict.examples_run,
        "duration_s": verdict.duration_s,
        "output": cap(verdict.output, OUTPUT_CAP),
    })


def not_graded(problem: str | None, status: str, message: str) -> dict:
    """An object of :data:`SCHEMA`'s shape for a file nothing was graded of (a usage error, no file submitted,
    a grading that broke or was stopped): ``message`` says why, in one sentence."""
    return {"problem": problem, "status": Status(status).value, "message": message, "isolation": "none",
            "checks": [], "counterexample": None, "pitfall": None, "diagnosis": None, "first_wrong_part": None,
            "params_diff": [], "examples_run": 0, "duration_s": 0.0, "output": ""}


def usage_error_json(problem: str | None, message: str) -> str:
    """The object `--json` prints when the command line is wrong: nothing ran."""
    return _dumps(not_graded(problem, Status.ERROR.value, message))


def read_verdict(text: str | bytes) -> dict | None:
    """The one object `grade --json` printed (batch, Gradescope, the notebook and `grade check` read a
    grading this way); None where ``text`` is no verdict (the command broke before it printed one)."""
    try:
        verdict = json.loads(text)
    except ValueError:
        return None
    statuses = {s.value for s in Status}
    if (not isinstance(verdict, dict) or verdict.get("status") not in statuses
            or not isinstance(verdict.get("message"), str) or not isinstance(verdict.get("checks"), list)):
        return None
    return verdict


def _dumps(obj: dict) -> str:
    text = json.dumps(obj)
    if len(text) < MAX_JSON_CHARS:
        return text
    # Only learner text made almost wholly of characters JSON escapes (6 or 12 characters each) gets here:
    # keep every field, each string much shorter.
    return json.dumps(_recap(obj, 256))


def _recap(value, limit: int):
    if isinstance(value, str):
        return cap(value, limit)
    if isinstance(value, dict):
        return {k: v if k in ("inputs", "replay") else _recap(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_recap(v, limit) for v in value]
    return value


# -- text -----------------------------------------------------------------------------------------------

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


def shown(text: str, limit: int = TEXT_CAP, *, newlines: bool = False) -> str:
    """Learner-derived ``text`` as the text report may show it: capped, with control characters written
    out (``\\x1b``, ``\\r``); line breaks are kept only where ``newlines`` (and escaped otherwise, so a
    one-line field stays one line)."""
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub(lambda m: ascii(m.group())[1:-1], cap(text, limit))


def to_text(problem: Problem, verdict: Verdict, replay: str | None, *, colour: bool = False) -> str:
    """The verdict line, then what explains it (a known mistake, a diagnosis, the parameter tree, the first
    wrong part of a model), then the case that shows it and what properties it breaks, then the rest. With
    ``colour``, the verdict's word is coloured (see :func:`colour_wanted`)."""
    status = Status(verdict.status)
    headline = painted(HEADLINES[status], status) if colour else HEADLINES[status]
    lines = [f"{problem.slug}: {headline} - {shown(verdict.message)}"]
    if verdict.pitfall:
        lines += [f"Likely mistake ({verdict.pitfall.id}): {verdict.pitfall.message}"]
    if verdict.diagnosis:
        lines += [f"Diagnosis: {shown(verdict.diagnosis.message)}"]
    if verdict.params_diff:  # under the verdict line, or a paragraph of its own after an explanation
        lines += [""] * (len(lines) > 1) + [f"  {shown(line)}" for line in _lines(verdict.params_diff)]
    part = verdict.first_wrong_part
    if part:
        lines += ["", f"First wrong part: {shown(part.path, LINE_CAP) or 'the top-level module'}", f"  {shown(part.message)}",
                  *(f"  {shown(line)}" for line in _lines(part.details, PART_LINES))]
    outcome = verdict.counterexample
    if status == Status.NOT_STARTED:
        outcome = None
        replay = None
    if outcome is not None and outcome.args:
        lines += ["", f"Called {problem.call_text(outcome.args)}"]
        lines += _inputs_text(problem, outcome.args)
    if outcome is not None and outcome.error and outcome.error.get("traceback"):  # loading the file, too
        lines += ["", *(f"  {line}" for line in _traceback_lines(outcome.error["traceback"]))]
    elif outcome is not None and outcome.args and outcome.comparison is not None:
        lines += _comparison_text(problem, outcome)
    broken = [f"Property broken ({shown(c.name.removeprefix('property: '))}): {shown(c.message)}"
              for c in verdict.checks if c.status == Status.FAIL and c.name.startswith("property: ")]
    lines += [""] * bool(broken) + broken
    for check in verdict.checks:
        if check.status == Status.WARN:
            lines += ["", f"Warning ({shown(check.name)}): {shown(check.message)}"]
    lines += printed_section(verdict.output)
    if replay:
        lines += ["", f"Replay just this case: {replay}"]
    if verdict.isolation == "none":
        lines += ["", ISOLATION_NOTE]
    cases = "case" if verdict.examples_run == 1 else "cases"
    lines += [f"({verdict.examples_run} {cases} in {verdict.duration_s:.1f} s)"]
    return "\n".join(lines)


PRINTED_SHOWN = 20  # lines of what the learner's code printed that a report shows (the last ones)
TRACER = re.compile(r"\b(?:Jit|Jvp|Batch|Linearize|DynamicJaxpr)?Tracer\b|Traced<")


def printed_section(output: str, shown_lines: int = PRINTED_SHOWN) -> list[str]:
    """What the learner's code printed, as every report shows it: how many lines and which, the last
    ``shown_lines``; where it printed a traced value, how to see the numbers instead."""
    printed = shown(output or "", OUTPUT_CAP, newlines=True).strip()
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


def _traceback_lines(traceback: str) -> list[str]:
    """The worker's traceback, escaped; bounded again here, keeping its start and its end (the exception
    line), in case a worker sent more than it should."""
    lines = shown(traceback, newlines=True).split("\n")
    if len(lines) <= TRACEBACK_LINES:
        return lines
    head = TRACEBACK_LINES // 3
    tail = TRACEBACK_LINES - head - 1
    return lines[:head] + [f"... {len(lines) - head - tail} lines left out ..."] + lines[-tail:]


def _inputs_text(problem: Problem, args: dict) -> list[str]:
    lines = []
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            lines += [f"  {name} {value.dtype.name}{list(value.shape)} =",
                      *("    " + row for row in np.array2string(value, precision=6, threshold=200).splitlines())]
    return lines


def _comparison_text(problem: Problem, outcome: Outcome) -> list[str]:
    c = outcome.comparison
    if c.stage in ("array", "shape", "dtype"):
        lines = ["", f"Problem: {shown(c.message)}"]  # names the type learner code returned
        if c.stage != "array":
            lines += ["", f"Expected {_shape_text(c.expected.shape)}:",
                      *_grid(c.expected, problem, None, width=_cell_width(c.expected))]
        return lines
    focus = c.worst if c.worst is not None else c.first
    width = max(_cell_width(c.expected), _cell_width(c.actual))
    lines = ["", f"Expected {_shape_text(c.expected.shape)}:", *_grid(c.expected, problem, focus, width=width),
             "", "Got:", *_grid(c.actual, problem, focus, width=width),
             "", "Mismatches (x):", *_grid(c.mismatch, problem, focus, width=width, mask_only=True)]
    summary = [f"{c.count} of {c.expected.size} values wrong"]
    if c.first is not None:
        summary.append(f"first at {_index_text(problem, c.first)}")
    if c.worst is not None and c.stage == "values":
        e, a = c.expected[c.worst], c.actual[c.worst]
        summary.append(f"worst at {_index_text(problem, c.worst)} (expected {e:.7g}, got {a:.7g})")
    lines += ["", "; ".join(summary) + "."]
    if c.mismatch is not None and c.mismatch.ndim > 2:  # the grids show one slice: say where else it is wrong
        lead = c.mismatch.ndim - 2
        wrong = sorted({tuple(int(i) for i in index[:lead]) for index in np.argwhere(c.mismatch)})
        total = int(np.prod(c.mismatch.shape[:lead]))
        named = ", ".join(f"[{', '.join(map(str, w))}, :, :]" for w in wrong[:8]) + (", ..." if len(wrong) > 8 else "")
        lines += [f"Slices with wrong values: {len(wrong)} of {total} ({named}); the grids above show "
                  f"[{', '.join(map(str, focus[:lead]))}, :, :]."]
    if c.stage == "values":
        tol = "exact match required" if problem.exact else f"tolerance |actual - expected| <= {problem.atol:g} + {problem.rtol:g}·|expected|"
        rel = (f"{c.max_rel:.3g}" if math.isfinite(c.max_rel)
               else "inf (an expected value is 0 where yours is not)")
        lines += [f"Largest absolute error {c.max_abs:.3g}, largest relative error {rel}; {tol}."]
    return lines


def _shape_text(shape: tuple) -> str:
    return "(" + " × ".join(map(str, shape)) + ")"


def _index_text(problem: Problem, index: tuple) -> str:
    names = problem.axis_names
    if names and len(names) == len(index):
        text = ", ".join(f"{n}={i}" for n, i in zip(names, index))
        if names == ["i", "j"]:
            text += f", j - i = {index[1] - index[0]}"
        return f"({text})"
    return str(tuple(index))


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


def _grid(arr: np.ndarray, problem: Problem, focus: tuple | None, *, width: int, mask_only: bool = False) -> list[str]:
    """Rows of a 1-D or 2-D view of ``arr`` (the slice holding ``focus`` for higher ranks), cropped to a
    window around ``focus``; rows and columns labelled with their indices (and axis names if known)."""
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
    names = problem.axis_names if arr.ndim == 2 and problem.axis_names and len(problem.axis_names) == 2 else None
    width = max(width, len(str(c1 - 1)))
    if arr.ndim == 2:
        labels = [f"{names[0]}={r}" if names else f"[{r}]" for r in range(r0, r1)]
    else:
        labels = [""]
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
