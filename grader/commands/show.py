"""`grade show <problem>`: the statement's worked examples drawn, so that a learner sees what the function
should look like before writing it, and their own outputs beside them once their file runs.

The examples (problem.toml's ``[[examples]]``) run as a grading runs them, through a grading
:class:`~grader.grading.session.Session`: the learner's file in its confined worker, the reference in
the trusted one; nothing of the learner's is imported here. Each example becomes a
:class:`~grader.core.verdict_report.Report` whose counterexample is that example (expected whole, and the
learner's output where it came back): PASS or FAIL where it ran, NOT STARTED where the file did not get
to it (the untouched stub, or a file that stopped on an earlier one). ``--html`` writes them as one page
(the default), ``--json`` prints them, a report a line (what the notebook's ``check()`` reads for a PASS).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.core.exits import Exit, usage_error
from grader.problem import checkout, problems


def cmd_show(argv: list[str]) -> int:
    """Draw a problem's worked examples, with your outputs beside them where your file runs: `grade show
    <problem> [--file PATH] [--html PATH] [--json] [--first]`. Writes one HTML page and prints its path."""
    parser = argparse.ArgumentParser(prog="grade show", description=cmd_show.__doc__)
    parser.add_argument("problem", help="the problem's name, e.g. t5_relative_bias")
    parser.add_argument("--file", type=Path, help="your module (default: problems/<problem>/<problem>.py)")
    parser.add_argument("--html", type=Path, metavar="PATH",
                        help="where the page goes (default: .grade/<problem>-examples.html in the checkout)")
    parser.add_argument("--json", action="store_true", help="print each example's report as a JSON object, "
                        "one a line, instead of writing a page")
    parser.add_argument("--first", action="store_true", help="only the first example (the worked one)")
    args = parser.parse_args(argv)
    try:
        root = checkout.find_root()
        problem = problems.load(root, args.problem)
        learner = checkout.graded_file(args.file or problem.stub)
        if not learner.is_file():
            raise problems.UsageError(f"no file at {args.file or problem.stub}")
        if not problem.examples:
            raise problems.UsageError(f"{problem.slug} has no worked examples to draw")
        reports = examples(problem, learner, count=1 if args.first else None)
    except (problems.UsageError, problems.ProblemError) as exc:
        usage_error(str(exc))
        return Exit.USAGE
    if args.json:
        print("\n".join(report.to_json() for report in reports))
        return Exit.OK
    path = args.html or root / ".grade" / f"{problem.slug}-examples.html"
    from grader.core.files import write_text

    try:
        write_text(path, page(problem, reports))
    except OSError as exc:
        usage_error(f"could not write {path}: {exc.strerror or exc}")
        return Exit.USAGE
    print(checkout.relative(path))
    return Exit.OK


def examples(problem: problems.Problem, learner: Path, count: int | None = None):
    """The first ``count`` (default: every) worked example of ``problem``, each as a report: the reference's
    output whole, and ``learner``'s where it ran (run as a grading runs it)."""
    from dataclasses import replace

    from grader.core.verdict import Outcome, Status, Verdict
    from grader.core.verdict_report import Case, Report, Tolerance
    from grader.grading.session import Options, Session
    from grader.grading.workers import StopGrading
    from grader.problem.cases import case_to_json
    from grader.render import report

    chosen = problem.examples[:count]
    cases = [example.args for example in chosen]
    session = Session(problem, learner, Options(secret_seed=None))
    isolation = session.isolation
    outcomes: list[Outcome] = []
    stopped = "your file did not run"
    try:
        try:
            session.load()
            session.prefetch(cases)
            for example in chosen:
                outcomes.append(session.evaluate(example.name, example.args))
        except StopGrading as stop:
            stopped = stop.outcome.message
            outcomes.append(stop.outcome)
        expected = session.trusted.outputs("reference", cases)
    finally:
        session.close()
    reports = []
    for i, example in enumerate(chosen):
        shape = tuple(problem.natural_shape(example.args))
        whole = expected[i].reshape(shape)
        if i < len(outcomes) and outcomes[i].status in (Status.PASS, Status.FAIL, Status.ERROR):
            outcome = outcomes[i]
            built = report.build(problem, Verdict(problem.slug, outcome.status, outcome.message, isolation,
                                                  counterexample=outcome), None)
            case = built.counterexample
            if case.expected is None:  # it raised: the expected output drawn alone
                case = replace(case, expected=whole, expected_shape=shape)
            reports.append(replace(built, counterexample=case))
            continue
        said = outcomes[i].message if i < len(outcomes) else f"not run: {stopped}"
        case = Case(example.name, problem.call_text(example.args), case_to_json(problem, example.args), whole,
                    shape, tuple(problem.axis_names) if problem.axis_names else None,
                    Tolerance(problem.exact, problem.atol, problem.rtol), None, None, False, None, None, None)
        reports.append(Report(problem.slug, Status.NOT_STARTED, said, isolation, counterexample=case))
    return reports


def page(problem: problems.Problem, reports) -> str:
    """The worked examples as one HTML page: each one's figure, with what the grading said of it."""
    from grader.core.verdict import Status
    from grader.render import figures, html, text

    ran = any(r.status != Status.NOT_STARTED for r in reports)
    sections = [html.paragraph(problem.title),
                html.paragraph("Each example as the reference computes it, and yours beside it." if ran else
                               f"What the reference computes on each example. Yours appear beside them once "
                               f"your file runs ({text.shown(reports[0].message)}).", note=True)]
    for r in reports:
        case = r.counterexample
        word = text.HEADLINES[r.status] if r.status != Status.NOT_STARTED else ""
        drawn = figures.example(case, word)
        parts = [html.heading(case.name, 3), html.pre(f"{case.call}")]
        if r.status != Status.NOT_STARTED:
            parts.append(html.paragraph(f"{word} - {text.shown(r.message)}"))
        if drawn is not None:
            parts.append(html.png(drawn.png, f"{case.name}: {', '.join(_columns(drawn))}"))
        sections.append(html.section(*parts))
    return html.page(f"{problem.slug}: the worked examples", *sections)


def _columns(drawn) -> list[str]:
    return list(dict.fromkeys(p.column for p in drawn.panels))
