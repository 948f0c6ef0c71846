"""Your own function on a failing case, in your own Python: to print inside it, or step through it.

A report saves its failing case (``Replay just this case: grade <problem> --replay .grade/cases/...json``).
Grading runs your code in a confined worker and compares its output with the reference's there; this
runs it here, in the process you start, where a ``print`` or a debugger's breakpoint works as anywhere.
It is no verdict: nothing is compared.

From the command line, ``grade debug <problem> --replay CASE [--file PATH]`` calls your function on the case
(eagerly, with the parameters moved as the case was run) and prints the inputs and what it returned; run
it as ``python -m pdb -m grader.cli debug ...`` to step through. From Python (a notebook, a debugger, a
script)::

    from grader.cases import load

    case = load(".grade/cases/t5_relative_pos-0123456789.json")
    case.args                     # {"seed": 0, "T": 4, ...}, in the signature's order
    out = case.call(t5_relative_pos)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

from grader.core import kinds
from grader.core.exits import Exit, usage_error
from grader.problem import problems
from grader.problem import checkout
from grader.problem.cases import case_from_json


@dataclass(frozen=True)
class Case:
    """A saved case: the problem it is of, its arguments (in the entry's order) and how its parameters were
    moved (False, True, or the paths moved)."""

    problem: problems.Problem
    args: dict
    moved: bool | frozenset = False

    def call(self, function):
        """``function`` (your entry, or anything with its signature) called on the case, here, eagerly: with
        the parameters it makes moved as the grader moved them when this case ran."""
        from grader.sandbox import moved as moving

        with moving.moving(self.moved):
            return function(*[self.args[name] for name in self.problem.args])


def load(path: str | Path, root: str | Path | None = None) -> Case:
    """The case saved at ``path`` (a report's replay file), read as `grade --replay` reads it; ``root``: the
    checkout or handout (default: the one around the current folder)."""
    path = Path(path)
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("problem"), str) or "args" not in data:
        raise ValueError(f"{path} is not a case file (a report's replay file)")
    problem = problems.load(Path(root) if root is not None else checkout.find_root(), data["problem"])
    args = case_from_json(problem, data["args"])
    which = kinds.moved(args)
    return Case(problem, {name: args[name] for name in problem.args},
                which if isinstance(which, bool) else frozenset(which))


def cmd_debug(argv: list[str]) -> int:
    """Run your function on a saved case in this process, to print or step through it (no verdict):
    `grade debug <problem> --replay CASE [--file PATH]`."""
    parser = argparse.ArgumentParser(prog="grade debug", description=cmd_debug.__doc__)
    parser.add_argument("problem", help="the problem's name, e.g. t5_relative_pos")
    parser.add_argument("--replay", type=Path, required=True, metavar="CASE", help="a report's replay file")
    parser.add_argument("--file", type=Path, help="your module, if not the problem's stub")
    args = parser.parse_args(argv)
    try:
        root = checkout.find_root()
        case = load(args.replay, root)
        if case.problem.slug != args.problem:
            raise problems.UsageError(f"{args.replay} is a case of {case.problem.slug!r}, not {args.problem!r}")
        path = checkout.graded_file(args.file or case.problem.stub)
    except FileNotFoundError:
        return usage_error(f"no case file at {args.replay}")
    except (problems.UsageError, problems.ProblemError, ValueError, kinds.KindError) as exc:
        return usage_error(str(exc))
    print(f"grade debug: your {case.problem.slug} from {checkout.relative(path)}, run here (not confined, not "
          f"compared: no verdict) on {case.problem.call_text(case.args)}"
          + (" with the parameters moved as the grader moved them" if case.moved else ""), flush=True)
    spec = importlib.util.spec_from_file_location(f"kata_{case.problem.slug}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # an exception here, or below, is yours to read: a traceback as Python prints
    out = case.call(getattr(module, case.problem.slug))
    print("returned:", type(out).__name__, getattr(out, "dtype", ""), getattr(out, "shape", ""))
    import numpy as np

    with np.printoptions(threshold=2000, linewidth=110):
        print(np.asarray(out))
    return Exit.OK
