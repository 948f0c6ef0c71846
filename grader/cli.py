"""The ``grade`` command. Each subcommand is one function; its docstring is its help text."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

# Only light modules here: `grade <problem>` starts its workers' zygote before importing NumPy and the rest.
from grader.problem import problems
from grader.problem import checkout
from grader.commands.learner import file_digest, load_state, progress_line, record_status
from grader.core import exits
from grader.core.exits import Exit
from grader.core.submission import MAX_BYTES as MAX_MODULE_BYTES
from grader.render import formats
from grader.sandbox.zygote import Launch



def cmd_grade(argv: list[str]) -> int:
    """Grade your solution to a problem: `grade <problem> [--file PATH] [--json] [--replay CASE] [--part NAME]`."""
    parser = grade_parser()
    args = parser.parse_args(argv)
    if args.json and args.format not in (None, "json"):
        parser.error(f"--json and --format {args.format} do not go together")
    args.json = args.json or args.format == "json"
    if args.html is not None:
        if args.json or args.format not in (None, "html") or args.output is not None:
            parser.error(f"--html goes alone: not with {'--json' if args.json else '--format' if args.format else '--output'}")
        args.format, args.output = "html", args.html if isinstance(args.html, Path) else None
    if args.output is not None and not formats.FORMATS[args.format or "text"].to_file:
        parser.error(f"--output goes with --format {' or '.join(n for n, f in formats.FORMATS.items() if f.to_file)}")
    if args.output is not None and not args.output.absolute().parent.is_dir():
        parser.error(f"--output {args.output}: no folder {args.output.absolute().parent} to write it in")
    launch = None
    try:
        root = checkout.find_root()
        launch = prepare_launch(root, args)
        problem, learner, cases = read_request(root, args)
    except (problems.UsageError, problems.ProblemError, ValueError, KeyError) as exc:
        if launch is not None:
            launch.close()
        return usage_error(str(exc), args.json, args.problem, results=results_file(args))
    return grade_and_print(root, problem, learner, cases, args, launch)


def grade_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grade", description=cmd_grade.__doc__,
                                     epilog="Other commands: `grade list`, `grade next`, `grade watch [problem]`, "
                                            "`grade hint <problem>`, `grade solution <problem>`, `grade show <problem>`, "
                                            "`grade reset <problem>`; for instructors `grade check [problem]`, "
                                            "`grade new <slug>`, `grade handout DIR`, `grade batch <problem> "
                                            "SUBMISSIONS...`, `grade gradescope <problem>... -o ZIP`.")
    parser.add_argument("problem", help="the problem's name, e.g. t5_relative_pos")
    parser.add_argument("--file", type=Path, help="grade this module instead of problems/<problem>/<problem>.py")
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout "
                        "(the same as --format json)")
    parser.add_argument("--format", choices=formats.FORMATS,
                        help="; ".join(f"{name}: {f.help}" for name, f in formats.FORMATS.items()))
    parser.add_argument("--output", type=Path, metavar="PATH",
                        help="where a format written to a file writes it (default: results.json here; a page, "
                             ".grade/<problem>.html in the checkout)")
    parser.add_argument("--html", nargs="?", const=True, type=Path, metavar="PATH",
                        help="also write the report as one HTML page, with a figure of the failure, and print "
                             "its path (default: .grade/<problem>.html in the checkout)")
    parser.add_argument("--replay", type=Path, metavar="CASE", help="run only the case saved in this file")
    parser.add_argument("--part", metavar="NAME",
                        help="grade one module class of a model alone (e.g. RMSNorm), on the reference's "
                             "parameters and on the inputs the reference's forward pass gives it; or one "
                             "step of a layer (e.g. ShawAttention.scores) or helper function (e.g. "
                             "relative_position_bucket) the stub asks for")
    parser.add_argument("--no-jit", action="store_true", help="call your function eagerly, without jax.jit")
    parser.add_argument("--no-cache", action="store_true", help="recompute every reference output")
    parser.add_argument("--call-time-limit", type=float, metavar="S", help="seconds allowed for one call")
    parser.add_argument("--time-limit", type=float, metavar="S", help="seconds allowed for the whole run")
    parser.add_argument("--memory-mib", type=int, metavar="N", help="memory limit for your code")
    return parser


def prepare_launch(root: Path, args: argparse.Namespace) -> Launch | None:
    """The workers' zygote, starting to import JAX now, while the grader reads the problem (None where the
    problem does not exist: the error comes when it is read)."""
    if not (root / "problems" / args.problem / "problem.toml").is_file():
        return None
    graded = checkout.graded_file(args.file or root / "problems" / args.problem / f"{args.problem}.py")
    return Launch.prepare(root / "solutions" / args.problem / f"{args.problem}.py",
                          None if args.no_cache else checkout.cache_folder(root),
                          checkout.learner_view(root, args.problem, graded), checkout.hidden_from_learners(root), graded)


def read_request(root: Path, args: argparse.Namespace) -> tuple[problems.Problem, Path, list | None]:
    """The problem, the file to grade and a replay's case, each read and checked before learner code runs;
    a UsageError says what is wrong with the request."""
    from grader.problem.cases import case_from_json

    problem = problems.load(root, args.problem)
    problem.hooks()  # an instructor's broken file is a usage error, found before anything runs
    problem.properties()
    problem.variants("pitfalls")  # pitfalls.toml, written out before learner code runs
    learner = checkout.graded_file(args.file or problem.stub)
    if not learner.is_file():
        raise problems.UsageError(f"no file at {args.file or problem.stub}")
    if learner.stat().st_size > MAX_MODULE_BYTES:  # read whole before it runs: a bound first
        raise problems.UsageError(f"{args.file or problem.stub} has {learner.stat().st_size} bytes, more than "
                                  f"the {MAX_MODULE_BYTES} a module to grade may have")
    cases = None
    if args.replay is not None:
        if not args.replay.is_file():
            raise problems.UsageError(f"no case file at {args.replay}")
        data = json.loads(args.replay.read_text())
        if data.get("problem") != problem.slug:
            raise problems.UsageError(f"{args.replay} is a case of {data.get('problem')!r}, not {problem.slug!r}")
        cases = [(f"replay of {args.replay.name}", case_from_json(problem, data["args"]))]
    if args.part is not None:
        check_part(problem, args)
    return problem, learner, cases


def check_part(problem: problems.Problem, args: argparse.Namespace) -> None:
    if args.replay is not None:
        raise problems.UsageError("--part and --replay do not go together")
    if problem.handout:
        raise problems.UsageError("--part needs the full checkout: a handout does not carry the "
                                  "reference's modules to run the part on")
    names = problem.part_names()
    if args.part not in names:
        import difflib

        close = difflib.get_close_matches(args.part, names, n=1, cutoff=0.6)
        have = (f"its parts are {', '.join(names)}" if names
                else "it has no parts (no Flax module classes or helper functions to write in its stub)")
        guess = f"; did you mean {close[0]}?" if close else ""
        raise problems.UsageError(f"{problem.slug} has no part named {args.part!r}{guess} ({have})")


def grade_and_print(root: Path, problem: problems.Problem, learner: Path, cases: list | None,
                    args: argparse.Namespace, launch: Launch | None) -> int:
    """Grade, print the verdict (its first line as soon as a failure is known, in text) and record it."""
    import shlex
    from functools import partial

    from grader.explain import diagnosis
    from grader.grading.engine import Options, grade
    from grader.problem.cases import save_case
    from grader.render import report, text

    options = Options(jit=not args.no_jit, use_cache=not args.no_cache, call_seconds=args.call_time_limit,
                      problem_seconds=args.time_limit, memory_mib=args.memory_mib,
                      secret_seed=None if args.replay else checkout.secret_seed(root))
    explain = partial(diagnosis.explain, command=shlex.join(report.program()))  # hints say it as the user does
    streamed = text.Streamed(problem.slug, text.Medium(colour=text.colour_wanted(sys.stdout)))
    try:
        if args.part is not None:
            from grader.explain.parts import grade_part

            verdict = grade_part(problem, learner, args.part, options, launch=launch)
        else:
            verdict = grade(problem, learner, options, cases=cases, extra=explain, launch=launch,
                            found=None if args.json else streamed.found)
    except problems.ProblemError as exc:  # e.g. a strategy that fails when it draws
        return usage_error(str(exc), args.json, args.problem, results=results_file(args))
    replay = None
    if verdict.counterexample is not None and verdict.counterexample.args and verdict.status != "pass":
        saved = save_case(problem, verdict.counterexample.args)
        replay = report.replay_command(problem, saved, args.file)
    if args.file is None and cases is None and args.part is None:
        record_status(root, problem.slug, learner, verdict.status)
    built = report.build(problem, verdict, replay)
    if args.json:
        print(built.to_json())
    else:
        print(streamed.rest(built))
    results = results_file(args)
    if results is not None and not write_results(built, *results):  # the verdict is printed: only the file may be missing
        return Exit.USAGE
    if args.format == "html":
        print(f"The report as a page: {checkout.relative(results[1])}")
    return Exit.OK if verdict.status == "pass" else Exit.FAILED


def results_file(args: argparse.Namespace) -> tuple[formats.Format, Path] | None:
    """The format `--format` names and where it goes, for a format written to a file; else None."""
    chosen = formats.FORMATS[args.format or "text"]
    return (chosen, args.output or default_output(args)) if chosen.to_file else None


def default_output(args: argparse.Namespace) -> Path:
    """Where a format written to a file goes unless told: a page under the checkout's .grade/, named for the
    problem; a platform's results.json here."""
    if args.format != "html":
        return Path("results.json")
    try:
        root = checkout.find_root()
    except problems.UsageError:
        root = Path.cwd()
    return root / ".grade" / f"{args.problem}.html"


def write_results(report, chosen: formats.Format, path: Path) -> bool:
    """Writes ``report`` (a :class:`~grader.core.verdict_report.Report`) in the ``chosen`` format to ``path``,
    atomically; where it cannot, says why on stderr and returns False."""
    from grader.core.files import write_text

    try:
        write_text(path, chosen.write(report))
    except OSError as exc:
        print(f"grade: could not write {path}: {exc.strerror or exc}", file=sys.stderr)
        return False
    return True


def usage_error(message: str, as_json: bool, problem: str | None = None, *,
                results: tuple[formats.Format, Path] | None = None) -> int:
    exits.usage_error(message)
    if as_json or results is not None:
        from grader.core.verdict_report import Report
        from grader.core.verdict import Status

        nothing = Report.not_graded(problem, Status.ERROR, message)
        if as_json:
            print(nothing.to_json())
        if results is not None:
            write_results(nothing, *results)
    return Exit.USAGE


def cmd_list(argv: list[str]) -> int:
    """List every problem with the status of its last grading (if the file is unchanged since), whether you
    gave up on it, and how many have passed. A problem that does not load is listed as `broken: <why>`; the
    exit code is 2 when every problem is broken."""
    argparse.ArgumentParser(prog="grade list", description=cmd_list.__doc__).parse_args(argv)
    try:
        root = checkout.find_root()
    except problems.UsageError as exc:
        return usage_error(str(exc), False)
    from grader.render import text

    colour = text.colour_wanted(sys.stdout)
    state = load_state(root)
    rows, broken = [], 0
    for slug in checkout.slugs(root):
        try:
            problem = problems.load(root, slug)
            if not problem.stub.is_file():
                raise problems.ProblemError(f"problems/{slug}/{slug}.py is missing")
        except problems.ProblemError as exc:  # one broken problem must not hide the others
            broken += 1
            rows.append((slug, "", f"broken: {exc}"))
            continue
        entry = state.get(slug, {})
        last = entry.get("status")
        if not isinstance(last, str):
            status = "not graded yet"
        elif entry.get("sha256") != file_digest(problem.stub):
            status = f"edited since last grade ({last})"
        else:
            status = text.painted(last, last) if colour else last
        if entry.get("gave_up"):
            status += ", gave up"
        rows.append((slug, problem.title, status))
    width = max(len(r[0]) for r in rows) if rows else 0
    title_width = max(len(r[1]) for r in rows) if rows else 0
    for slug, title, status in rows:
        print(f"{slug.ljust(width)}  {title.ljust(title_width)}  {status}")
    if rows:
        print(progress_line(root, state))
    # A partly broken list still answers the question asked; an entirely broken one is an instructor's
    # mistake to stop on.
    return Exit.USAGE if rows and broken == len(rows) else Exit.OK


def cmd_check(argv: list[str]) -> int:
    """Instructors' self-check: every problem (or the one named) is consistent and its strategies strong."""
    from grader.instructor import check

    return check.main(argv)


def cmd_new(argv: list[str]) -> int:
    """Instructors: start a new problem, `grade new <slug>`: both folders, every file, TODOs in place."""
    from grader.instructor import new

    return new.main(argv)


def delegated(module: str, function: str = "main"):
    """A subcommand implemented as ``grader.<package>.<module>.<function>(argv)``, imported only when it runs."""
    def command(argv: list[str]) -> int:
        import importlib

        return getattr(importlib.import_module(f"grader.{module}"), function)(argv)
    command.target = f"grader.{module}", function
    return command


COMMANDS = {"list": cmd_list, "check": cmd_check, "new": cmd_new,
            "watch": delegated("commands.learner", "cmd_watch"), "hint": delegated("commands.learner", "cmd_hint"),
            "reset": delegated("commands.learner", "cmd_reset"), "solution": delegated("commands.learner", "cmd_solution"),
            "next": delegated("commands.learner", "cmd_next"), "debug": delegated("commands.debug", "cmd_debug"),
            "show": delegated("commands.show", "cmd_show"),
            "batch": delegated("instructor.batch"),
            "gradescope": delegated("instructor.gradescope"), "handout": delegated("instructor.handout")}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: grade <problem> [--file PATH] [--json] ...\n"
              "grade: which problem? `grade next` names the first one you have not passed, `grade list` shows "
              "them all, `grade --help` says more", file=sys.stderr)
        return Exit.USAGE
    try:
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:])
        return cmd_grade(argv)
    except BrokenPipeError:  # the reader went away (`grade ... | head`): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return Exit.FAILED


def run() -> None:
    """The console script: ``main``, then an exit that skips the interpreter's teardown (tens of
    milliseconds with JAX-sized modules loaded; the workers are gone and the files written by then)."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
