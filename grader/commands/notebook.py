"""Grading from a notebook: ``check("rmsnorm", rmsnorm)`` in Jupyter or Colab.

The learner's function is untrusted, so it never runs here. It is written out as a module
(:mod:`grader.commands.notebook_writer`), which is graded by the ordinary command line in a subprocess,
`grade <problem> --file F --json` (:mod:`grader.commands.graded`), so the verdict, the isolation and the
limits are exactly the command line's. :func:`check` returns a :class:`Result`, which the notebook
displays: a small HTML report, or the plain text one. Nothing here imports NumPy or JAX but the reading and
formatting of a report.
"""

from __future__ import annotations

import builtins
import html
import os
import pathlib
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from grader.commands.notebook_objects import _one_of, _type_label
from grader.commands.notebook_writer import NotWritable, module_source
from grader.problem import problems
from grader.problem import checkout

if TYPE_CHECKING:
    from grader.core.verdict_report import Report

GRADE_SECONDS = 3600.0  # for one `grade` command, beyond its own limits on learner code (an hour: a stuck one ends)
COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#bc4c00", "timeout": "#bc4c00",
           "not_started": "#6e7781"}
_PATHS = (pathlib.PosixPath, pathlib.WindowsPath, pathlib.PurePosixPath, pathlib.PureWindowsPath)  # not subclasses


# -- the public call ------------------------------------------------------------------------------------

@dataclass(repr=False)
class Result:
    """What grading said: the report `grade <problem> --json` printed (:class:`grader.core.verdict_report.Report`).

    A notebook shows it through :meth:`_repr_html_`; ``repr`` is the plain text report."""

    problem: str
    verdict: Report
    file: Path | None = None  # the module graded: yours, or one written for your function
    root: Path | None = None  # the checkout the command ran in: a replay runs from there
    kept: bool = False  # the file was written for your function, and kept because it did not pass
    plot: bool = True  # a figure under the report: the failure, or for a PASS the worked example
    example: Report | None = None  # for a PASS, the worked example with your output (`grade show --first`)

    @property
    def status(self) -> str:
        """``pass``, ``fail``, ``error``, ``timeout`` or ``not_started``."""
        return self.verdict.status.value

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def __repr__(self) -> str:
        return to_text(self)

    def _repr_html_(self) -> str:
        return to_html(self)


def check(problem: str, function=None, *, source: str | Path | None = None, plot: bool = True) -> Result:
    """Grade a problem from a notebook, as `grade <problem> --file F` does: ``check("rel_shift", rel_shift)``.

    ``function`` is your entry function, defined in a cell (named as you like: the file graded gives it
    the problem's name); what it uses from the notebook comes along, the classes of a module problem
    too. Where a cell builds things the file cannot hold, give the whole module instead: ``source=`` its
    text, or the path of a file. A notebook (or an interactive session) shows the returned
    :class:`Result`, with a figure under the report (``plot=False``: none): expected | yours | where
    they differ for a failure; for a PASS, your output beside the reference's on the statement's worked
    example (one more run of your file, `grade show --first`). In a script, ``check`` prints its report too."""
    result = _check(problem, function, source, bool(plot))
    if not getattr(builtins, "__IPYTHON__", False) and not hasattr(sys, "ps1"):  # (IPython sets the first)
        print(to_text(result), flush=True)
    return result


def _check(problem, function, source, plot: bool) -> Result:
    if type(problem) is not str or not problem.isidentifier():  # a str subclass, say, runs its own methods
        shown = repr(problem) if type(problem) is str else f"an object of type {_type_label(type(problem))}"
        return usage(None, f"{shown} is not a problem's name (e.g. 'rel_shift')")
    if source is not None and type(source) is not str and not _one_of(type(source), _PATHS):
        return usage(problem, f"source= takes the module's text or its path (a str or a pathlib path), not an "
                              f"object of type {_type_label(type(source))}")
    if (function is None) == (source is None):
        given = "neither" if function is None else "both"
        return usage(problem, f"give your function or a module's source, not {given}: check({problem!r}, {problem}) "
                              f"or check({problem!r}, source=...)")
    try:
        root = checkout.find_root()
    except problems.UsageError as exc:
        return usage(problem, str(exc))
    path = _source_path(source)
    if path is not None:
        if not path.is_file():
            return usage(problem, f"no file at {path}")
        return _grade(root, problem, path.resolve(), temporary=False, plot=plot)
    try:
        text = source if function is None else module_source(function, problem)
    except NotWritable as exc:
        return usage(problem, str(exc))
    folder = Path(tempfile.mkdtemp(prefix=f"grade-{problem}-"))
    file = folder / f"{problem}.py"
    file.write_text(text, encoding="utf-8")
    return _grade(root, problem, file, temporary=True, plot=plot)


def usage(problem: str | None, message: str) -> Result:
    """A result for a call that graded nothing, as `grade --json` writes a usage error."""
    from grader.core.verdict_report import Report
    from grader.core.verdict import Status

    return Result(problem or "", Report.not_graded(problem, Status.ERROR, message))


def _source_path(source) -> Path | None:
    """``source`` as a path when it names a file (a path object, or one line ending in .py), else None."""
    if _one_of(type(source), _PATHS):
        return Path(source)
    if type(source) is str and "\n" not in source and source.strip().endswith(".py"):
        return Path(source.strip())
    return None


def _grade(root: Path, problem: str, file: Path, *, temporary: bool, plot: bool) -> Result:
    """Run `grade <problem> --file F --json` from ``root`` and read its one JSON object (and, for a PASS to
    draw, its worked example); a temporary file is removed once it passes, and kept otherwise."""
    from grader.commands import graded

    ran = graded.grade(graded.grade_argv(problem, file), GRADE_SECONDS, cwd=root)
    result = Result(problem, ran.verdict) if ran.verdict is not None else usage(problem, ran.why_not())
    result.root, result.file, result.plot = root, file, plot
    if plot and result.passed:
        result.example = worked_example(root, problem, file)
    result.kept = temporary and not result.passed
    forget_kept(problem, file.parent if result.kept else None, everything=result.passed)
    return result


def worked_example(root: Path, problem: str, file: Path) -> Report | None:
    """The statement's first example as `grade show <problem> --file F --json --first` reports it: the
    reference's output and ``file``'s, run as a grading runs it (None where that printed no report)."""
    from grader.commands import graded
    from grader.core.verdict_report import InvalidReport, Report

    done = graded.run_command(graded.command("show", problem, "--file", str(file), "--json", "--first"),
                              GRADE_SECONDS, cwd=root)
    try:
        return Report.from_json(done.stdout.splitlines()[0]) if done.returncode == 0 and done.stdout else None
    except InvalidReport:
        return None


KEPT_SECONDS = 24 * 3600.0  # a failing check's module is kept this long at most (its replay needs it)


def forget_kept(problem: str, keep: Path | None, everything: bool) -> None:
    """Remove the modules earlier checks of ``problem`` wrote and kept because they did not pass (their
    reports' replays read them): all of them once a check of it passes (``everything``), else those older
    than :data:`KEPT_SECONDS`; never ``keep``. Only this user's folders that hold that one module."""
    import time

    for folder in Path(tempfile.gettempdir()).glob(f"grade-{problem}-*"):
        try:
            info = folder.lstat()
            if (folder == keep or not folder.is_dir() or folder.is_symlink() or info.st_uid != os.getuid()
                    or [p.name for p in folder.iterdir()] != [f"{problem}.py"]):
                continue
            if everything or time.time() - info.st_mtime > KEPT_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


# -- the report -----------------------------------------------------------------------------------------


def _medium(result: Result):
    """The notebook's text report: the command line's, with the replay run from the checkout and the
    kept file named."""
    from grader.render import text

    kept = (f"Your code as graded is kept in {result.file}",) if result.kept else ()
    return text.Medium(replay_from=str(result.root) if result.root else "", tail=kept)


def to_text(result: Result) -> str:
    """The text report of `grade` (:func:`grader.render.text.render`), from the verdict's object."""
    from grader.render import text

    return text.render(result.verdict, _medium(result))


def to_html(result: Result) -> str:
    """The text report as HTML: the verdict word in its colour, then the rest as the text has it, then
    the figure (:func:`figure`)."""
    from grader.render import text

    _, *rest = text.sections(result.verdict, replace(_medium(result), name_problem=False))
    status = result.status
    word = text.HEADLINES[result.verdict.status]
    message = text.shown(result.verdict.message)
    body = "\n".join(line for section in rest for line in section).strip("\n")
    return (f'<div class="grade-result"><p><b style="color:{COLOURS.get(status, "#6e7781")}">{word}</b> '
            f'<code>{html.escape(result.problem)}</code> &mdash; {html.escape(message)}</p>'
            + (f"<pre>{html.escape(body)}</pre>" if body else "") + figure(result) + "</div>")


def figure(result: Result) -> str:
    """The result's figure as HTML (an inline PNG), or "" where there is none to draw or ``plot`` is off: a
    failure's expected | yours | where they differ, or a PASS's worked example."""
    if not result.plot:
        return ""
    from grader.render import figures
    from grader.render import html as pages

    if result.passed:
        case = result.example.counterexample if result.example is not None else None
        drawn = figures.example(case, "PASS") if case is not None and case.actual is not None else None
        said = "the worked example: the reference's output and yours"
    else:
        drawn = figures.failure(result.verdict)
        said = "expected | yours | where they differ"
    return pages.png(drawn.png, f"{said}. {drawn.caption}") if drawn is not None else ""
