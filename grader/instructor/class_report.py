"""A class's mistakes at a glance: what ``grade batch`` writes beside the gradebook.

- ``summary.json`` (:data:`SCHEMA`): per problem, the pass rate; which submissions ended in each status; each
  named mistake, each diagnosis, each first wrong part of a model and each kind of error with how many
  submissions made it and which; the failures nothing named; the seconds a submission took.
- ``class.html``: the same, as a page (:mod:`grader.render.html`) with a picture per problem: a bar for each
  thing that went wrong, the most frequent at the top.

Every list is most frequent first (then by name); students are listed by name. Everything is read from the
typed reports (:class:`~grader.core.verdict_report.Report`), as the verdict files hold them: nothing is
parsed from their text. matplotlib is imported only to draw the picture.
"""

from __future__ import annotations

import io
import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from grader.core.cut import cut
from grader.core.verdict import Status
from grader.core.verdict_report import Report
from grader.render import html

VERSION = 1
MESSAGE_CAP = 300  # characters of a group's message (one submission's; its verdict file has it all)
SLOWEST = 5  # submissions named as the slowest
FAILING = (Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.NOT_STARTED)


@dataclass(frozen=True)
class Graded:
    """One submission as the class report reads it: whose, its report, and the seconds its grade took."""

    student: str
    report: Report
    seconds: float


@dataclass(frozen=True)
class Group:
    """Submissions that share something (a named mistake, a diagnosis, a wrong part, an error): its id, what
    one of their reports says of it, and who they are."""

    id: str
    message: str
    students: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass(frozen=True)
class Seconds:
    """How long a submission's grade took, over the class."""

    median: float
    mean: float
    max: float
    total: float
    slowest: tuple[tuple[str, float], ...]  # (student, seconds), the slowest first


@dataclass(frozen=True)
class Summary:
    """One problem's class: every count :data:`SCHEMA` writes."""

    problem: str
    submissions: int
    statuses: tuple[Group, ...]  # id: a status; message: empty
    mistakes: tuple[Group, ...]  # the known mistakes named (pitfalls)
    diagnoses: tuple[Group, ...]
    first_wrong_parts: tuple[Group, ...]  # id: the part's path in the model
    errors: tuple[Group, ...]  # id: the exception's type, else what the report says (no value came back)
    unexplained: tuple[str, ...]  # failed with nothing named: no mistake, diagnosis or wrong part
    seconds: Seconds

    @property
    def passed(self) -> int:
        return sum(g.count for g in self.statuses if g.id == Status.PASS.value)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.submissions if self.submissions else 0.0


# -- counting -------------------------------------------------------------------------------------------


def summarize(problem: str, graded: Iterable[Graded]) -> Summary:
    """The class's summary for ``problem`` from its submissions' reports."""
    graded = sorted(graded, key=lambda g: g.student)
    statuses, mistakes, diagnoses, parts, errors = (defaultdict(list) for _ in range(5))
    unexplained = []
    for g in graded:
        report = g.report
        statuses[report.status.value].append((g.student, ""))
        if report.pitfall:
            mistakes[report.pitfall.id].append((g.student, report.pitfall.message))
        if report.diagnosis:
            diagnoses[report.diagnosis.id].append((g.student, report.diagnosis.message))
        if report.first_wrong_part:
            parts[report.first_wrong_part.path].append((g.student, report.first_wrong_part.message))
        if report.status in (Status.ERROR, Status.NOT_STARTED):
            errors[error_kind(g)].append((g.student, report.message))
        if report.status == Status.FAIL and not (report.pitfall or report.diagnosis or report.first_wrong_part):
            unexplained.append(g.student)
    times = [g.seconds for g in graded]
    slowest = sorted(graded, key=lambda g: (-g.seconds, g.student))[:SLOWEST]
    seconds = Seconds(round(statistics.median(times), 2) if times else 0.0,
                      round(statistics.fmean(times), 2) if times else 0.0, round(max(times, default=0.0), 2),
                      round(sum(times), 2), tuple((g.student, round(g.seconds, 2)) for g in slowest))
    return Summary(problem, len(graded), groups(statuses), groups(mistakes), groups(diagnoses), groups(parts),
                   groups(errors), tuple(unexplained), seconds)


def error_kind(graded: Graded) -> str:
    """What an error is named by: the exception learner code raised, else the report's sentence (the
    student's name in it written ``<student>``, so that one sentence said of several is one kind)."""
    case = graded.report.counterexample
    if case and case.error and case.error.type:
        return case.error.type
    return cut(" ".join(graded.report.message.split()).replace(graded.student, "<student>"), 120)


def groups(members: dict[str, list[tuple[str, str]]]) -> tuple[Group, ...]:
    """Groups from ``id -> [(student, message)]``, the largest first (then by id); each with its first
    student's message."""
    made = [Group(key, cut(" ".join(found[0][1].split()), MESSAGE_CAP), tuple(sorted(s for s, _ in found)))
            for key, found in members.items()]
    return tuple(sorted(made, key=lambda g: (-g.count, g.id)))


# -- summary.json ---------------------------------------------------------------------------------------

_TEXT = {"type": "string"}
_STUDENTS = {"type": "array", "items": _TEXT, "description": "the students, by name"}
_SECONDS = {"type": "number", "minimum": 0}


def _record(description: str, **properties) -> dict:
    return {"type": "object", "description": description, "properties": properties,
            "required": list(properties), "additionalProperties": False}


def _groups(description: str) -> dict:
    return {"type": "array", "description": description + "; the most frequent first",
            "items": _record("submissions that share it", id=_TEXT, message=_TEXT,
                             count={"type": "integer", "minimum": 1}, students=_STUDENTS)}


SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "grade batch: summary.json", **_record(
    "A class's grades summed up, per problem, beside the gradebook",
    version={"const": VERSION},
    problems={"type": "array", "items": _record(
        "one problem's class",
        problem=_TEXT,
        submissions={"type": "integer", "minimum": 0},
        passed={"type": "integer", "minimum": 0},
        pass_rate={"type": "number", "minimum": 0, "maximum": 1},
        statuses=_groups("which submissions ended in each status (id: pass, fail, error, timeout, "
                         "not_started; message empty)"),
        mistakes=_groups("each known mistake named (id: the pitfall's id)"),
        diagnoses=_groups("each diagnosis (id: the diagnosis's id)"),
        first_wrong_parts=_groups("each first wrong part of a model (id: its path in the module tree)"),
        errors=_groups("each kind of error, where no value came back (id: the exception's type, else the "
                       "report's sentence)"),
        unexplained=_STUDENTS | {"description": "the failures nothing named: no mistake, diagnosis or wrong part"},
        seconds=_record("seconds a submission's grade took", median=_SECONDS, mean=_SECONDS, max=_SECONDS,
                        total=_SECONDS, slowest={"type": "array", "items": _record(
                            "one of the slowest, the slowest first", student=_TEXT, seconds=_SECONDS)}),
    )},
)}


def to_json(summaries: Iterable[Summary]) -> str:
    """``summary.json``'s text: one object of :data:`SCHEMA`."""
    def problem(s: Summary) -> dict:
        def listed(found: tuple[Group, ...]) -> list[dict]:
            return [{"id": g.id, "message": g.message, "count": g.count, "students": list(g.students)} for g in found]

        return {"problem": s.problem, "submissions": s.submissions, "passed": s.passed,
                "pass_rate": round(s.pass_rate, 4), "statuses": listed(s.statuses), "mistakes": listed(s.mistakes),
                "diagnoses": listed(s.diagnoses), "first_wrong_parts": listed(s.first_wrong_parts),
                "errors": listed(s.errors), "unexplained": list(s.unexplained),
                "seconds": {**{k: v for k, v in asdict(s.seconds).items() if k != "slowest"},
                            "slowest": [{"student": n, "seconds": t} for n, t in s.seconds.slowest]}}

    return json.dumps({"version": VERSION, "problems": [problem(s) for s in summaries]}, indent=1) + "\n"


# -- the picture ----------------------------------------------------------------------------------------

KINDS = {"mistake": "#cf222e", "diagnosis": "#bc4c00", "part": "#8250df", "error": "#6e7781",
         "timeout": "#9a6700", "not named": "#0969da"}


def bars(summary: Summary) -> list[tuple[str, str, int]]:
    """What the picture draws, one bar each, the most frequent first: (kind, label, count) for every
    mistake, diagnosis, wrong part and kind of error, the timeouts and the failures nothing named."""
    found = [("mistake", g.id, g.count) for g in summary.mistakes]
    found += [("diagnosis", g.id, g.count) for g in summary.diagnoses]
    found += [("part", g.id, g.count) for g in summary.first_wrong_parts]
    found += [("error", g.id, g.count) for g in summary.errors]
    found += [("timeout", "time limit", g.count) for g in summary.statuses if g.id == Status.TIMEOUT.value]
    if summary.unexplained:
        found.append(("not named", "failed, nothing named", len(summary.unexplained)))
    return sorted(found, key=lambda bar: -bar[2])  # stable: the kinds' order among equals


def chart(summary: Summary):
    """The picture of ``summary``'s class: a horizontal bar per :func:`bars`, the most frequent at the top,
    coloured by kind; a matplotlib Figure (None where nothing went wrong)."""
    found = bars(summary)
    if not found:
        return None
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 1.0 + 0.32 * len(found)), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    labels = [f"{kind}: {cut(label, 60)}" for kind, label, _ in found]
    counts = [count for _, _, count in found]
    places = range(len(found))
    axes.barh(places, counts, color=[KINDS[kind] for kind, _, _ in found], height=0.7)
    axes.set_yticks(places, labels, fontsize=9)
    axes.invert_yaxis()  # the most frequent at the top
    axes.set_xlim(0, summary.submissions or 1)
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.set_xlabel(f"submissions, of {summary.submissions}")
    axes.set_title(f"{summary.problem}: {summary.passed} of {summary.submissions} passed ({summary.pass_rate:.0%})",
                   fontsize=11, loc="left")
    for place, count in zip(places, counts):
        axes.annotate(str(count), (count, place), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    return figure


def png(figure) -> bytes:
    drawn = io.BytesIO()
    figure.savefig(drawn, format="png")
    return drawn.getvalue()


# -- class.html -----------------------------------------------------------------------------------------


def page(summaries: Iterable[Summary], title: str = "The class's mistakes", drawn: bool = True) -> str:
    """``class.html``'s text: for each problem, the counts, the picture (where ``drawn``), and a table per
    kind of thing that went wrong, the most frequent first."""
    sections = []
    for s in summaries:
        parts = [html.heading(s.problem, anchor=s.problem),
                 html.paragraph(f"{s.passed} of {s.submissions} submissions passed ({s.pass_rate:.0%}). "
                                f"A grade took {s.seconds.median:.1f} s (median), {s.seconds.mean:.1f} s on average, "
                                f"{s.seconds.max:.1f} s at most; {s.seconds.total:.1f} s in all."),
                 html.table(["status", "submissions", "students"],
                            [(g.id, g.count, ", ".join(g.students)) for g in s.statuses],
                            numeric=[1], classes={0: "cell"})]
        figure = chart(s) if drawn else None
        if figure is not None:
            parts.append(html.png(png(figure), f"{s.problem}: what went wrong, the most frequent first",
                                  caption="Each bar: the submissions that made a mistake, got a diagnosis, went "
                                          "wrong first in a part of the model, or erred the same way."))
        for name, found, column in (("Named mistakes", s.mistakes, "mistake"), ("Diagnoses", s.diagnoses, "diagnosis"),
                                    ("First wrong parts", s.first_wrong_parts, "part"), ("Errors", s.errors, "error")):
            if found:
                parts += [html.heading(name, level=3),
                          html.table([column, "submissions", "students", "what one report says"],
                                     [(g.id, g.count, ", ".join(g.students), g.message) for g in found], numeric=[1])]
        if s.unexplained:
            parts += [html.heading("Failed, nothing named", level=3),
                      html.paragraph(f"{len(s.unexplained)}: {', '.join(s.unexplained)}")]
        if s.seconds.slowest:
            parts += [html.heading("Slowest grades", level=3),
                      html.table(["student", "seconds"], [(n, f"{t:.1f}") for n, t in s.seconds.slowest], numeric=[1])]
        sections.append(html.section(*parts))
    note = "Every list is most frequent first; each submission's whole verdict is in verdicts/<student>.json."
    if not drawn:
        note += " The batch was interrupted: these are the rows done, and the picture is drawn when a batch ends."
    return html.page(title, html.paragraph(note, note=True), *sections)


def write(folder: Path, summaries: list[Summary], drawn: bool = True) -> tuple[Path, Path]:
    """``folder/summary.json`` and ``folder/class.html`` (its picture where ``drawn``: matplotlib's first
    import on a machine builds its font list, seconds that an interrupted batch does not spend); their paths."""
    from grader.core.files import write_text

    written = folder / "summary.json", folder / "class.html"
    write_text(written[0], to_json(summaries))
    write_text(written[1], page(summaries, f"The class's mistakes: {', '.join(s.problem for s in summaries)}", drawn))
    return written
