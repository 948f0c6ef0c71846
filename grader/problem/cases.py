"""Cases on disk: an argument dict as a case file (a replay, a handout's record, golden outputs) keeps it."""

from __future__ import annotations

from pathlib import Path

from grader.core import kinds
from grader.core.files import write_json
from grader.problem.problems import Problem


def case_to_json(problem: Problem, args: dict) -> dict:
    """A case as a case file keeps it: each argument in its kind's form, and the mark of moved parameters."""
    data = {name: kinds.kind(kind).to_json(args[name]) for name, kind in problem.args.items()}
    moved = kinds.moved(args)
    if moved:
        data[kinds.MOVED] = moved if moved is True else list(moved)
    return data


def case_from_json(problem: Problem, data: dict) -> dict:
    if isinstance(data, dict):  # check_args says what is missing, extra, or not a dict at all
        data = {name: _from_json(problem, name, value) if name in problem.args else value
                for name, value in data.items()}
    return problem.check_args(data)


def _from_json(problem: Problem, name: str, value):
    try:
        return kinds.kind(problem.args[name]).from_json(value)
    except kinds.KindError as exc:
        raise kinds.KindError(f"{problem.slug}: argument {name} {exc}") from None


def save_case(problem: Problem, args: dict) -> Path:
    data = {"problem": problem.slug, "args": case_to_json(problem, args)}
    digest = kinds.args_digest(problem.args, args)[:10]
    path = problem.root / ".grade" / "cases" / f"{problem.slug}-{digest}.json"
    write_json(path, data)
    return path
