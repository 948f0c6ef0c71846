"""The ``grade`` command. Each subcommand is one function; its docstring is its help text."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

# Only light modules here: `grade <problem>` starts its workers' zygote before importing NumPy and the rest.
from grader import problems
from grader.zygote import Launch

EXIT_PASS, EXIT_VERDICT, EXIT_USAGE = 0, 1, 2


def cmd_grade(argv: list[str]) -> int:
    """Grade your solution to a problem: `grade <problem> [--file PATH] [--json] [--replay CASE] [--part NAME]`."""
    parser = argparse.ArgumentParser(prog="grade", description=cmd_grade.__doc__,
                                     epilog="Other commands: `grade list`, `grade check [problem]`, `grade new <slug>`.")
    parser.add_argument("problem", help="the problem's name, e.g. t5_relative_pos")
    parser.add_argument("--file", type=Path, help="grade this module instead of problems/<problem>/<problem>.py")
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    parser.add_argument("--replay", type=Path, metavar="CASE", help="run only the case saved in this file")
    parser.add_argument("--part", metavar="NAME",
                        help="grade one module class of a model alone (e.g. RMSNorm), on the reference's "
                             "parameters and on the inputs the reference's forward pass gives it")
    parser.add_argument("--no-jit", action="store_true", help="call your function eagerly, without jax.jit")
    parser.add_argument("--no-cache", action="store_true", help="recompute every reference output")
    parser.add_argument("--call-time-limit", type=float, metavar="S", help="seconds allowed for one call")
    parser.add_argument("--time-limit", type=float, metavar="S", help="seconds allowed for the whole run")
    parser.add_argument("--memory-mib", type=int, metavar="N", help="memory limit for your code")
    args = parser.parse_args(argv)
    launch = None
    try:
        root = problems.find_root()
        if (root / "problems" / args.problem / "problem.toml").is_file():
            # The workers' zygote starts importing JAX now, while the grader reads the problem.
            learner_folder = (args.file.resolve().parent if args.file else root / "problems" / args.problem)
            launch = Launch.prepare(root / "solutions" / args.problem / f"{args.problem}.py",
                                    None if args.no_cache else problems.cache_folder(root),
                                    (str(root), str(learner_folder)))
        from grader import report
        from grader.engine import Options, grade

        problem = problems.load(root, args.problem)
        problem.hooks()  # an instructor's broken file is a usage error, found before anything runs
        problem.properties()
        problem.variants("pitfalls")  # pitfalls.toml, written out before learner code runs
        learner = (args.file or problem.stub).resolve()
        if not learner.is_file():
            raise problems.UsageError(f"no file at {args.file or problem.stub}")
        cases = None
        if args.replay is not None:
            if not args.replay.is_file():
                raise problems.UsageError(f"no case file at {args.replay}")
            data = json.loads(args.replay.read_text())
            if data.get("problem") != problem.slug:
                raise problems.UsageError(f"{args.replay} is a case of {data.get('problem')!r}, not {problem.slug!r}")
            cases = [(f"replay of {args.replay.name}", report.case_from_json(problem, data["args"]))]
        if args.part is not None:
            if args.replay is not None:
                raise problems.UsageError("--part and --replay do not go together")
            if args.part not in problem.parts():
                have = (f"its parts are {', '.join(problem.parts())}" if problem.parts()
                        else "it has no parts (no Flax module classes in its stub)")
                raise problems.UsageError(f"{problem.slug} has no part named {args.part!r}: {have}")
    except (problems.UsageError, problems.ProblemError, ValueError, KeyError) as exc:
        if launch is not None:
            launch.close()
        return usage_error(str(exc), args.json, args.problem)

    options = Options(jit=not args.no_jit, use_cache=not args.no_cache, call_seconds=args.call_time_limit,
                      problem_seconds=args.time_limit, memory_mib=args.memory_mib)
    import shlex
    from functools import partial

    from grader import diagnosis

    explain = partial(diagnosis.explain, command=shlex.join(report.program()))  # hints say it as the user does
    try:
        if args.part is not None:
            from grader.parts import grade_part

            verdict = grade_part(problem, learner, args.part, options, launch=launch)
        else:
            verdict = grade(problem, learner, options, cases=cases, extra=explain, launch=launch)
    except problems.ProblemError as exc:  # e.g. a strategy that fails when it draws
        return usage_error(str(exc), args.json, args.problem)
    replay = None
    if verdict.counterexample is not None and verdict.counterexample.args and verdict.status != "pass":
        saved = report.save_case(problem, verdict.counterexample.args)
        replay = report.replay_command(problem, saved, args.file)
    if args.file is None and cases is None and args.part is None:
        record_status(root, problem.slug, learner, verdict.status)
    if args.json:
        print(report.to_json(problem, verdict, replay))
    else:
        print(report.to_text(problem, verdict, replay))
    return EXIT_PASS if verdict.status == "pass" else EXIT_VERDICT


def usage_error(message: str, as_json: bool, problem: str | None = None) -> int:
    print(f"grade: {message}", file=sys.stderr)
    if as_json:
        from grader import report

        print(report.usage_error_json(problem, message))
    return EXIT_USAGE


def state_path(root: Path) -> Path:
    return root / ".grade" / "state.json"


def file_digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_status(root: Path, slug: str, learner: Path, status: str) -> None:
    from grader.cache import write_json

    path = state_path(root)
    try:
        state = json.loads(path.read_text()) if path.is_file() else {}
    except ValueError:
        state = {}
    state[slug] = {"status": str(status), "sha256": file_digest(learner)}
    write_json(path, state)


def cmd_list(argv: list[str]) -> int:
    """List every problem with the status of its last grading (if the file is unchanged since). A problem
    that does not load is listed as `broken: <why>`; the exit code is 2 when every problem is broken."""
    argparse.ArgumentParser(prog="grade list", description=cmd_list.__doc__).parse_args(argv)
    try:
        root = problems.find_root()
    except problems.UsageError as exc:
        return usage_error(str(exc), False)
    path = state_path(root)
    try:
        state = json.loads(path.read_text()) if path.is_file() else {}
    except ValueError:
        state = {}
    rows, broken = [], 0
    for slug in problems.slugs(root):
        try:
            problem = problems.load(root, slug)
            if not problem.stub.is_file():
                raise problems.ProblemError(f"problems/{slug}/{slug}.py is missing")
        except problems.ProblemError as exc:  # one broken problem must not hide the others
            broken += 1
            rows.append((slug, "", f"broken: {exc}"))
            continue
        entry = state.get(slug)
        if entry is None:
            status = "not graded yet"
        elif entry.get("sha256") != file_digest(problem.stub):
            status = f"edited since last grade ({entry['status']})"
        else:
            status = entry["status"]
        rows.append((slug, problem.title, status))
    width = max(len(r[0]) for r in rows) if rows else 0
    title_width = max(len(r[1]) for r in rows) if rows else 0
    for slug, title, status in rows:
        print(f"{slug.ljust(width)}  {title.ljust(title_width)}  {status}")
    # A partly broken list still answers the question asked; an entirely broken one is an instructor's
    # mistake to stop on.
    return EXIT_USAGE if rows and broken == len(rows) else EXIT_PASS


def cmd_check(argv: list[str]) -> int:
    """Instructors' self-check: every problem (or the one named) is consistent and its strategies strong."""
    from grader import check

    return check.main(argv)


def cmd_new(argv: list[str]) -> int:
    """Instructors: start a new problem, `grade new <slug>`: both folders, every file, TODOs in place."""
    from grader import new

    return new.main(argv)


def delegated(module: str, function: str = "main"):
    """A subcommand implemented as ``grader.<module>.<function>(argv)``, imported only when it runs."""
    def command(argv: list[str]) -> int:
        import importlib

        return getattr(importlib.import_module(f"grader.{module}"), function)(argv)
    return command


COMMANDS = {"list": cmd_list, "check": cmd_check, "new": cmd_new,
            "watch": delegated("learner", "cmd_watch"), "hint": delegated("learner", "cmd_hint"),
            "reset": delegated("learner", "cmd_reset"), "solution": delegated("learner", "cmd_solution"),
            "next": delegated("learner", "cmd_next"), "batch": delegated("batch"),
            "gradescope": delegated("gradescope"), "handout": delegated("handout")}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:])
        return cmd_grade(argv)
    except BrokenPipeError:  # the reader went away (`grade ... | head`): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_VERDICT


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
