"""The output formats of a verdict, one table: :data:`FORMATS` maps each name `grade --format` takes to the
function of the typed report (:class:`~grader.core.verdict_report.Report`) that writes it, and says whether it is
printed or written to a file. A new format is one function and one row. The command line reads the table
before its workers start, so this module imports nothing heavy until a format is written.

- ``text``: the report (:mod:`grader.render.text`); ``json``: the one object of
  :data:`grader.core.verdict_report.SCHEMA`.
- :func:`exercism`: exercism's test-runner interface, version 3. Each check of the verdict is a test, in
  the verdict's order (the order the grader ran them). A kata is one task (its stub's TODO), so every
  test links to task 1.
- :func:`html_file`: one HTML page, the text report under the figure of the failure (`grade <problem> --html`).
- :func:`gradescope`: Gradescope's autograder results. Each problem is worth ``points``, all or nothing
  on its verdict (the checks are not independent: a run stops at its first failure); its checks follow
  it as 0-point entries, passed or failed, for feedback. What the verdict names (the known mistake, the
  diagnosis, the first wrong part) is tagged on the problem's entry, said in the entry of the check the
  run stopped at, and kept in ``extra_data``: an instructor can sort a class by it. The autograder
  (:mod:`grader.instructor.gradescope`) writes it for every problem of a submission; the table's row, for one.

The platforms' results are pure functions of reports as `grade <problem> --json` carries them
(:meth:`~grader.core.verdict_report.Report.wire`); nothing is read, run or written here. Everything that came from
learner code (printed output, exception messages) is shown as text: control characters written out
(:func:`grader.render.text.shown`), and Gradescope told to show every string as plain text, never as HTML
or Markdown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from grader.core.cut import cut, cut_middle
from grader.core.verdict import Check, Status

if TYPE_CHECKING:
    from grader.core.verdict_report import Report

EXERCISM_VERSION = 3
OUTPUT_LIMIT = 500  # characters of a test's output, exercism's limit (the note included)
TRUNCATED = "[Output was truncated. Please limit to 500 chars]"
MESSAGE_LIMIT = 65535  # characters of exercism's top-level message
TEST_CODE_LIMIT = 4000  # characters of a call written out with its arrays; longer ones keep the summary
PRINTED_LINES = 40  # lines of printed output a Gradescope entry shows (the last ones)
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
ERRED = {Status.ERROR, Status.TIMEOUT, Status.NOT_STARTED}  # no value came back


# -- exercism -------------------------------------------------------------------------------------------

def exercism(report: Report, solution_dir: str | None = None) -> dict:
    """exercism's ``results.json`` (version 3) for one report of ``grade <problem> --json``.

    Statuses: a check that passed (or only warned) is ``pass``, one whose output was wrong is ``fail``,
    and one where no value came back (an exception, a time limit, the untouched stub) is ``error``. The
    run is ``pass`` for a PASS verdict, ``error`` (with ``message``) when every test errored or none ran
    (the file does not load, the first call raises), else ``fail``. The test the run stopped at carries
    the whole explanation as its ``message`` and the call as its ``test_code``; what the code printed,
    cut to 500 characters, goes with it (the grader captures printing per run, not per test).
    ``solution_dir`` (else the folder of the file an exception came from) is written ``<solution-dir>``
    in messages, as exercism asks.
    """
    stop = _stopping_check(report)
    tests = []
    for i, check in enumerate(report.checks):
        test = {"name": check.name, "status": _exercism_status(check.status), "task_id": 1}
        if i == stop:
            test["message"] = describe(report, printed=False)
            code = test_code(report)
            if code:
                test["test_code"] = code
        elif check.status != Status.PASS:
            test["message"] = _check_message(check)
        tests.append(test)
    if report.printed and tests:
        tests[stop if stop is not None else 0]["output"] = truncate_output(report.printed)
    if report.status == Status.PASS:
        overall = "pass"
    elif all(t["status"] == "error" for t in tests):
        overall = "error"
    else:
        overall = "fail"
    results = {"version": EXERCISM_VERSION, "status": overall}
    if overall == "error":
        results["message"] = cut_middle(describe(report), MESSAGE_LIMIT)
    results["tests"] = tests
    folder = solution_dir or _learner_folder(report)
    return _relative(results, folder) if folder else results


def _exercism_status(status: Status) -> str:
    if status in (Status.PASS, Status.WARN):
        return "pass"
    return "error" if status in ERRED else "fail"


def truncate_output(text: str) -> str:
    """``text`` within exercism's 500 characters: cut, with the note exercism asks for, where longer."""
    return cut(text.strip(), OUTPUT_LIMIT, "\n" + TRUNCATED)


def _learner_folder(report: Report) -> str | None:
    error = report.counterexample.error if report.counterexample else None
    path = (error.file if error else None) or ""
    return path.rsplit("/", 1)[0] if path.startswith("/") and "/" in path[1:] else None


def _relative(value, folder: str):
    if isinstance(value, str):
        return value.replace(folder.rstrip("/") + "/", "<solution-dir>/")
    if isinstance(value, dict):
        return {k: _relative(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [_relative(v, folder) for v in value]
    return value


# -- Gradescope -----------------------------------------------------------------------------------------

def gradescope(reports: list[Report], points: float = 1.0, *, visibility: str = "visible",
               stdout_visibility: str = "hidden", execution_time: float | None = None) -> dict:
    """Gradescope's ``results.json`` for the reports of one submission, one per problem.

    Each problem is an entry worth ``points``: all of them for a PASS, none otherwise, its output the
    verdict explained (what :func:`describe` writes), its ``tags`` what the verdict names (:func:`named`,
    ``kind:what``); each of its checks follows as an entry worth 0, ``passed`` or ``failed``, the one the
    run stopped at saying what the verdict names too. ``score`` is the sum (Gradescope takes the
    assignment's total from its own settings: set the autograder's points to ``points`` times the number
    of problems). ``visibility``
    applies to every entry; ``stdout_visibility`` to what ``run_autograder`` printed (the instructors'
    log). ``execution_time`` defaults to the sum of the gradings' durations.
    """
    from grader.render import text

    for name, value in (("visibility", visibility), ("stdout_visibility", stdout_visibility)):
        if value not in VISIBILITIES:
            raise ValueError(f"{name} must be one of {', '.join(VISIBILITIES)}, not {value!r}")
    if not (isinstance(points, (int, float)) and math.isfinite(points) and points > 0):
        raise ValueError(f"points must be a positive number, not {points!r}")
    tests, lines, extra = [], [], {}
    for report in reports:
        slug = report.problem or "?"
        earned = float(points) if report.status == Status.PASS else 0.0
        names = named(report)
        tests.append({"name": slug, "score": earned, "max_score": float(points),
                      "status": "passed" if earned else "failed", "output": describe(report),
                      "tags": [f"{kind}:{what}" for kind, what in names], "visibility": visibility})
        stop = _stopping_check(report)
        for i, check in enumerate(report.checks):
            ok = check.status in (Status.PASS, Status.WARN)
            said = "".join(f"\n{NAMED[kind]}: {what}" for kind, what in names) if i == stop else ""
            tests.append({"name": f"{slug}: {text.shown(check.name, text.LINE_CAP)}", "score": 0.0, "max_score": 0.0,
                          "status": "passed" if ok else "failed", "output": _check_message(check) + said,
                          "visibility": visibility})
        lines.append(f"{slug}: {text.headline(report, text.PLATFORM, text.LINE_CAP)} ({_number(earned)}/{_number(points)})")
        extra[slug] = {"status": report.status.value, "isolation": report.isolation.value,
                       "duration_s": report.duration_s, **{key: dict(names).get(kind) for kind, key in
                                                           (("mistake", "pitfall"), ("diagnosis", "diagnosis"),
                                                            ("part", "first_wrong_part"))}}
    score = sum(t["score"] for t in tests)
    if execution_time is None:
        execution_time = sum(float(r.duration_s or 0) for r in reports)
    return {
        "score": score,
        "execution_time": round(execution_time, 2),
        "output": "\n".join(lines + [f"Total: {_number(score)}/{_number(points * len(reports))}"]),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
        "extra_data": {"problems": extra},
        "tests": tests,
    }


NAMED = {"mistake": "Likely mistake", "diagnosis": "Diagnosis", "part": "First wrong part"}  # kind -> its words


def named(report: Report) -> list[tuple[str, str]]:
    """What the verdict names, as (kind, what): ``mistake`` and the known mistake's id, ``diagnosis`` and
    the diagnosis's id, ``part`` and the path of the model's first wrong part, each where there is one."""
    from grader.render.text import LINE_CAP, shown

    return ([("mistake", report.pitfall.id)] if report.pitfall else []) \
        + ([("diagnosis", report.diagnosis.id)] if report.diagnosis else []) \
        + ([("part", shown(report.first_wrong_part.path, LINE_CAP))] if report.first_wrong_part else [])


def _number(x: float) -> str:
    return f"{x:g}"


def describe(report: Report, *, printed: bool = True) -> str:
    """The verdict explained as the text report explains it (:func:`grader.render.text.render`), for a
    platform's reader: without the problem's name (the platform says it), a replay command (there is no
    checkout to run it in) or the timing; with ``printed``, the end of what the code printed (its two
    processes' without the grader's line between them)."""
    from grader.render import text

    return text.render(replace(report, output=report.printed),
                       replace(text.PLATFORM, printed_lines=PRINTED_LINES if printed else 0))


def _is_array(value) -> bool:
    return isinstance(value, dict) and {"dtype", "shape", "data"} <= set(value)


def _check_message(check: Check) -> str:
    from grader.render.text import shown

    prefix = "Warning: " * (check.status == Status.WARN)
    return prefix + shown(check.message)


def _stopping_check(report: Report) -> int | None:
    """The index of the check the run stopped at (the counterexample's, else the first of the report's
    own status), or None for a PASS."""
    status = report.status
    if status == Status.PASS:
        return None
    name = report.counterexample.name if report.counterexample else None
    for wanted in ((lambda c: c.name == name and c.status == status),
                   (lambda c: c.status == status),
                   (lambda c: c.status not in (Status.PASS, Status.WARN))):
        found = next((i for i, c in enumerate(report.checks) if wanted(c)), None)
        if found is not None:
            return found
    return None


# -- the call as code -----------------------------------------------------------------------------------

def test_code(report: Report) -> str | None:
    """The failing call as Python, arrays written out (``np.array([...], dtype=np.float32)``), where it
    is short enough to read; else the call as the report summarises it."""
    case = report.counterexample
    if not case or not case.call or report.status == Status.NOT_STARTED:
        return None
    function = case.call.split("(", 1)[0]
    code = f"{function}({', '.join(f'{name}={_literal(value)}' for name, value in case.inputs.items())})"
    if any(_is_array(v) for v in case.inputs.values()):
        code = "import numpy as np\n" + code
    return code if len(code) <= TEST_CODE_LIMIT else case.call


def _literal(value) -> str:
    if _is_array(value):
        import numpy as np

        data = [float(v) if isinstance(v, str) else v for v in value["data"]]
        fits = math.prod(value["shape"]) == len(data)
        nested = np.array(data, dtype=object).reshape(value["shape"]).tolist() if fits else data
        return f"np.array({_python(nested)}, dtype=np.{value['dtype']})"
    return _python(value)


def _python(value) -> str:
    """``value`` as a Python literal; non-finite floats as ``float('nan')`` and the like."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float('{value}')"
    if isinstance(value, list):
        return "[" + ", ".join(_python(v) for v in value) + "]"
    return repr(value)


# -- the table ------------------------------------------------------------------------------------------

def text_report(report: Report) -> str:
    """The text report, as `grade` prints it where its output is no terminal."""
    from grader.render import text

    return text.render(report)


def json_object(report: Report) -> str:
    """The one JSON object of :data:`grader.core.verdict_report.SCHEMA`."""
    return report.to_json()


def exercism_file(report: Report) -> str:
    """exercism's results.json for ``report``, as the file is written."""
    return json.dumps(exercism(report.wire()), indent=2) + "\n"


def gradescope_file(report: Report) -> str:
    """Gradescope's results.json for ``report`` alone (one problem, one point), as the autograder writes it."""
    return json.dumps(gradescope([report.wire()]), indent=1)


def html_file(report: Report) -> str:
    """One self-contained HTML page: the figure of the failure (:func:`grader.render.figures.failure`) and
    the text report; no network, no script, printable (:mod:`grader.render.html`)."""
    from grader.render import figures, html, text

    drawn = figures.failure(report) if report.status != Status.PASS else None
    shown = [html.png(drawn.png, f"expected | yours | where they differ. {drawn.caption}")] if drawn else []
    return html.page(text.headline(report), *shown, html.pre(text.render(report)))


@dataclass(frozen=True)
class Format:
    """One output format: what it writes of a report, and where."""

    write: Callable[[Report], str]
    help: str
    to_file: bool = False  # written to `--output`, the text report printed too; else printed instead of it


FORMATS = {
    "text": Format(text_report, "the report (the default)"),
    "json": Format(json_object, "exactly one JSON object, as --json"),
    "exercism": Format(exercism_file, "exercism's results.json, to --output; the report printed", to_file=True),
    "gradescope": Format(gradescope_file, "Gradescope's results.json for this problem, to --output; the "
                                          "report printed", to_file=True),
    "html": Format(html_file, "one HTML page, the report with its figure, to --output (as --html); the report "
                              "printed", to_file=True),
}
