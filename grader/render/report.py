"""A verdict as its report: :func:`build` makes the typed :class:`~grader.core.verdict_report.Report` of a
:class:`~grader.core.verdict.Verdict` once, in-process, with its arrays whole (the text report shows them
as grids; its JSON, :meth:`~grader.core.verdict_report.Report.to_json`, their first values); and the command the
user typed, as a report prints it back (:func:`program`, :func:`replay_command`).

Everything that came from learner code (printed output, exception types and messages, tracebacks, file
names, parameter paths, the type of a returned value) is untrusted: every learner-sized piece is capped
here, as the text report and the JSON show it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from grader.core.verdict_report import Case, Diff, Error, Report, Tolerance, WrongPart, schema_number
from grader.core.verdict import Check, CheckKind, Diagnosis, Isolation, Outcome, Status, Verdict
from grader.problem.cases import case_to_json
from grader.problem.problems import Problem
from grader.problem.checkout import relative
from grader.render.text import LINE_CAP, OUTPUT_CAP, PART_LINES, cap, capped_lines


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


# -- the report ------------------------------------------------------------------------------------------

def build(problem: Problem, verdict: Verdict, replay: str | None) -> Report:
    """The report of ``verdict`` (its arrays whole), every learner-sized piece capped; ``replay``: the
    command that runs its counterexample alone."""
    part = verdict.first_wrong_part
    return Report(
        problem=verdict.problem,
        status=Status(verdict.status),
        message=cap(verdict.message),
        isolation=Isolation(verdict.isolation),
        checks=tuple(Check(cap(c.name, LINE_CAP), Status(c.status), cap(c.message), CheckKind(c.kind))
                     for c in verdict.checks),
        counterexample=_case(problem, verdict.counterexample, replay),
        pitfall=verdict.pitfall,
        diagnosis=(Diagnosis(cap(verdict.diagnosis.id, LINE_CAP), cap(verdict.diagnosis.message))
                   if verdict.diagnosis else None),
        first_wrong_part=(WrongPart(cap(part.path, LINE_CAP), cap(part.message),
                                    tuple(capped_lines(part.details, PART_LINES)),
                                    part.expected, part.actual, part.mismatch) if part else None),
        params_diff=tuple(capped_lines(verdict.params_diff)),
        examples_run=verdict.examples_run,
        duration_s=verdict.duration_s,
        output=cap(verdict.output, OUTPUT_CAP))


def _case(problem: Problem, outcome: Outcome | None, replay: str | None) -> Case | None:
    if outcome is None or outcome.status == Status.NOT_STARTED or not (outcome.args or outcome.error):
        return None
    comparison = outcome.comparison
    actual = comparison.actual if comparison is not None and comparison.actual is not None else outcome.actual
    diff = error = None
    if comparison is not None:
        summary = comparison.summary()
        diff = Diff(summary["stage"], cap(summary["message"]), summary["mismatches"], _index(summary["first_index"]),
                    _index(summary["worst_index"]), schema_number(summary["max_abs_error"]),
                    schema_number(summary["max_rel_error"]), comparison.mismatch)
    if outcome.error:
        error = Error(*(cap(outcome.error.get(k)) for k in ("type", "message", "file", "traceback")),
                      line=outcome.error.get("line"))
    return Case(
        name=cap(outcome.name),
        call=cap(problem.call_text(outcome.args)) if outcome.args else "",
        inputs=case_to_json(problem, outcome.args) if outcome.args else {},
        expected=comparison.expected if comparison is not None else None,
        expected_shape=(tuple(comparison.expected.shape) if comparison is not None
                        else tuple(problem.natural_shape(outcome.args)) if outcome.args else ()),
        axes=tuple(problem.axis_names) if problem.axis_names is not None else None,
        tolerance=Tolerance(problem.exact, problem.atol, problem.rtol),
        actual=actual,
        actual_shape=tuple(actual.shape) if actual is not None else None,
        actual_truncated=False,
        diff=diff,
        error=error,
        replay=replay)


def _index(index: list[int] | None) -> tuple[int, ...] | None:
    return tuple(index) if index is not None else None
