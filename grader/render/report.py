"""A verdict as one object: the schema of what `grade --json` prints, the object built from a
:class:`~grader.core.verdict.Verdict`, and the one reader of it that batch, Gradescope, the notebook and
`grade check` use. The text report is this object rendered (:mod:`grader.render.text`), in-process with its
arrays whole.

Everything that came from learner code (printed output, exception types and messages, tracebacks, file
names, parameter paths, the type of a returned value) is untrusted. In the JSON, json.dumps escapes it, and
every learner-sized piece is capped so that the object stays under :data:`MAX_JSON_CHARS`.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import sys
from pathlib import Path

import numpy as np

from grader.core.compare import Stage
from grader.core.verdict import CheckKind, Isolation, Outcome, Status, Verdict
from grader.problem.cases import case_to_json
from grader.problem.problems import Problem, relative
from grader.render import text
from grader.render.text import LINE_CAP, OUTPUT_CAP, PART_LINES, cap, capped_lines

VALUES_SHOWN = 4096  # values of one array a JSON report carries
MAX_JSON_CHARS = 1 << 20  # --json prints fewer characters than this, whatever learner code did


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
    status={"enum": [s.value for s in text.HEADLINES]},
    message=_TEXT,
    isolation={"enum": [i.value for i in Isolation],
               "description": "how learner code was confined: namespaces; user (the kernel refused them, and "
                              "root's grader ran it as an unprivileged user); none, also when no code ran "
                              "(a usage error)"},
    checks={"type": "array", "items": _record(
        "a phase of the run, or a property of the output checked", name=_TEXT,
        status={"enum": [s.value for s in Status]}, message=_TEXT,
        kind={"enum": [k.value for k in CheckKind]})},
    counterexample=_nullable(_record(
        "the input that shows the failure, shrunk, and what happened on it (or loading the file, where that "
        "failed: then with no call)",
        name=_TEXT,
        call={**_TEXT, "description": "the call as code, empty where none was made"},
        inputs={"type": "object", "description": "argument name -> its case-file form (grader.core.kinds); \"@moved\": "
                                                 "true where the parameters were moved from their initial values"},
        expected=_nullable(_VALUES),
        expected_shape=_SHAPE,
        axes=_nullable({"type": "array", "items": _TEXT, "description": "the names of the expected shape's axes"}),
        tolerance=_record("what counts as equal", exact={"type": "boolean"}, atol=_NUMBER, rtol=_NUMBER),
        actual=_nullable(_VALUES),
        actual_shape=_nullable({**_SHAPE, "description": "the natural shape where the answer could be "
                                "compared cell by cell, else the shape of what came back"}),
        actual_truncated={"type": "boolean"},
        diff=_nullable(_record(
            "the staged comparison", stage={"enum": [s.value for s in Stage]},
            message=_TEXT, mismatches={"type": "integer", "minimum": 0},
            first_index=_nullable(_SHAPE), worst_index=_nullable(_SHAPE),
            max_abs_error=_NUMBER, max_rel_error=_NUMBER,
            mismatch=_nullable({"type": "array", "maxItems": VALUES_SHOWN, "items": {"type": "boolean"},
                                "description": "which of the actual values are wrong, in their order"}))),
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
        message=_TEXT, details={"type": "array", "items": _TEXT, "description": "what it shows (grids)"})),
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


# -- the object -------------------------------------------------------------------------------------------

def _number(x) -> float | int | str:
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def _values(arr: np.ndarray | None, whole: bool) -> tuple[np.ndarray | list | None, bool]:
    """``arr`` itself where ``whole``, else its first VALUES_SHOWN values, flat; and whether that is fewer
    than it has."""
    if arr is None or whole:
        return arr, False
    return [_number(v) for v in arr.flat[:VALUES_SHOWN].tolist()], arr.size > VALUES_SHOWN


def counterexample_object(problem: Problem, outcome: Outcome | None, replay: str | None,
                          whole: bool = False) -> dict | None:
    if outcome is None or outcome.status == Status.NOT_STARTED or not (outcome.args or outcome.error):
        return None
    comparison = outcome.comparison
    actual = comparison.actual if comparison is not None and comparison.actual is not None else outcome.actual
    actual_values, truncated = _values(actual, whole)
    diff = None
    if comparison is not None:
        diff = comparison.summary()
        diff.update(message=cap(diff["message"]), max_abs_error=_number(diff["max_abs_error"]),
                    max_rel_error=_number(diff["max_rel_error"]),
                    mismatch=_values(comparison.mismatch, whole)[0])
    error = None
    if outcome.error:
        error = {k: cap(outcome.error.get(k)) for k in ("type", "message", "file", "traceback")}
        error["line"] = outcome.error.get("line")
    return {
        "name": cap(outcome.name),
        "call": cap(problem.call_text(outcome.args)) if outcome.args else "",
        "inputs": case_to_json(problem, outcome.args) if outcome.args else {},
        "expected": _values(comparison.expected, whole)[0] if comparison is not None else None,
        "expected_shape": (list(comparison.expected.shape) if comparison is not None
                           else list(problem.natural_shape(outcome.args)) if outcome.args else []),
        "axes": problem.axis_names,
        "tolerance": {"exact": problem.exact, "atol": problem.atol, "rtol": problem.rtol},
        "actual": actual_values,
        "actual_shape": list(actual.shape) if actual is not None else None,
        "actual_truncated": truncated,
        "diff": diff,
        "error": error,
        "replay": replay,
    }


def verdict_object(problem: Problem, verdict: Verdict, replay: str | None, *, whole: bool = False) -> dict:
    """The verdict as :data:`SCHEMA` has it; with ``whole``, for rendering in this process, its arrays are
    kept whole (NumPy arrays, natural shape) instead of their first values as lists."""
    return {
        "problem": verdict.problem,
        "status": Status(verdict.status).value,
        "message": cap(verdict.message),
        "isolation": Isolation(verdict.isolation).value,
        "checks": [{"name": cap(c.name, LINE_CAP), "status": Status(c.status).value, "message": cap(c.message),
                    "kind": CheckKind(c.kind).value} for c in verdict.checks],
        "counterexample": counterexample_object(problem, verdict.counterexample, replay, whole),
        "pitfall": {"id": verdict.pitfall.id, "message": verdict.pitfall.message} if verdict.pitfall else None,
        "diagnosis": ({"id": cap(verdict.diagnosis.id, LINE_CAP), "message": cap(verdict.diagnosis.message)}
                      if verdict.diagnosis else None),
        "first_wrong_part": ({"path": cap(part.path, LINE_CAP), "message": cap(part.message),
                              "details": capped_lines(part.details, PART_LINES)}
                             if (part := verdict.first_wrong_part) else None),
        "params_diff": capped_lines(verdict.params_diff),
        "examples_run": verdict.examples_run,
        "duration_s": verdict.duration_s,
        "output": cap(verdict.output, OUTPUT_CAP),
    }


def to_json(problem: Problem, verdict: Verdict, replay: str | None) -> str:
    return _dumps(verdict_object(problem, verdict, replay))


def to_text(problem: Problem, verdict: Verdict, replay: str | None, *, colour: bool = False) -> str:
    """The command line's report (see :func:`grader.render.text.sections`); with ``colour``, the verdict's
    word is coloured (see :func:`grader.render.text.colour_wanted`)."""
    return text.render(verdict_object(problem, verdict, replay, whole=True), text.Medium(colour=colour))


def not_graded(problem: str | None, status: str, message: str) -> dict:
    """An object of :data:`SCHEMA`'s shape for a file nothing was graded of (a usage error, no file submitted,
    a grading that broke or was stopped): ``message`` says why, in one sentence."""
    return {"problem": problem, "status": Status(status).value, "message": message, "isolation": Isolation.NONE.value,
            "checks": [], "counterexample": None, "pitfall": None, "diagnosis": None, "first_wrong_part": None,
            "params_diff": [], "examples_run": 0, "duration_s": 0.0, "output": ""}


def usage_error_json(problem: str | None, message: str) -> str:
    """The object `--json` prints when the command line is wrong: nothing ran."""
    return _dumps(not_graded(problem, Status.ERROR.value, message))


def read_verdict(text_or_bytes: str | bytes) -> dict | None:
    """The one object `grade --json` printed (batch, Gradescope, the notebook and `grade check` read a
    grading this way); None where it is no verdict (the command broke before it printed one)."""
    try:
        verdict = json.loads(text_or_bytes)
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
