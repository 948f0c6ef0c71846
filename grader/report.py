"""Turn a verdict into the learner's report: a short text for people, one JSON object for programs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np

from grader import cache as cache_mod
from grader.grading import Outcome, Verdict, call_text
from grader.problems import Problem, relative

WINDOW = 12  # rows and columns shown around the worst cell
HEADLINES = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "timeout": "TIMEOUT", "not_started": "NOT STARTED"}


# -- cases on disk, for replays -------------------------------------------------------------------------

def case_to_json(problem: Problem, args: dict) -> dict:
    out = {}
    for name, kind in problem.args.items():
        value = args[name]
        if isinstance(value, np.ndarray):
            out[name] = {"dtype": value.dtype.name, "shape": list(value.shape), "data": value.reshape(-1).tolist()}
        else:
            out[name] = value
    return out


def case_from_json(problem: Problem, data: dict) -> dict:
    args = {}
    for name, value in data.items():
        if isinstance(value, dict):
            value = np.asarray(value["data"], dtype=value["dtype"]).reshape(value["shape"])
        args[name] = value
    return problem.check_args(args)


def save_case(problem: Problem, args: dict) -> Path:
    data = {"problem": problem.slug, "args": case_to_json(problem, args)}
    digest = cache_mod.args_digest(args)[:10]
    path = problem.root / ".grade" / "cases" / f"{problem.slug}-{digest}.json"
    cache_mod.write_json(path, data)
    return path


def replay_command(problem: Problem, path: Path, learner_file: Path | None) -> str:
    words = ["grade", problem.slug]
    if learner_file is not None:
        words += ["--file", relative(learner_file)]
    words += ["--replay", relative(path)]
    return " ".join(shlex.quote(w) for w in words)


# -- JSON -----------------------------------------------------------------------------------------------

def counterexample_json(problem: Problem, outcome: Outcome | None, replay: str | None) -> dict | None:
    if outcome is None or not outcome.args or outcome.status == "not_started":
        return None
    comparison = outcome.comparison
    natural = problem.natural_shape(outcome.args)
    actual = None
    if comparison is not None and comparison.actual is not None:
        actual = comparison.actual.tolist()
    elif outcome.actual is not None:
        actual = outcome.actual.tolist()
    return {
        "name": outcome.name,
        "call": call_text(problem, outcome.args),
        "inputs": case_to_json(problem, outcome.args),
        "expected": comparison.expected.tolist() if comparison is not None else None,
        "expected_shape": list(natural),
        "actual": actual,
        "diff": comparison.summary() if comparison is not None else None,
        "error": {k: outcome.error.get(k) for k in ("type", "message", "file", "line", "traceback")}
        if outcome.error else None,
        "replay": replay,
    }


def to_json(problem: Problem, verdict: Verdict, replay: str | None) -> str:
    return json.dumps({
        "problem": verdict.problem,
        "status": verdict.status,
        "message": verdict.message,
        "checks": verdict.checks,
        "counterexample": counterexample_json(problem, verdict.counterexample, replay),
        "pitfall": verdict.pitfall,
        "examples_run": verdict.examples_run,
        "duration_s": verdict.duration_s,
        "output": verdict.output,
    })


# -- text -----------------------------------------------------------------------------------------------

def to_text(problem: Problem, verdict: Verdict, replay: str | None) -> str:
    lines = [f"{problem.slug}: {HEADLINES[verdict.status]} - {verdict.message}"]
    if verdict.pitfall:
        lines += [f"Likely mistake ({verdict.pitfall['id']}): {verdict.pitfall['message']}"]
    lines += [f"  {line}" for line in verdict.params_diff]
    outcome = verdict.counterexample
    if verdict.status == "not_started":
        outcome = None
        replay = None
    if outcome is not None and outcome.args:
        lines += ["", f"Called {call_text(problem, outcome.args)}"]
        lines += _inputs_text(problem, outcome.args)
        if outcome.error and outcome.error.get("traceback"):
            lines += ["", *outcome.error["traceback"].splitlines()[-14:]]
        elif outcome.comparison is not None:
            lines += _comparison_text(problem, outcome)
    for check in verdict.checks:
        if check["status"] == "warn":
            lines += ["", f"Warning ({check['name']}): {check['message']}"]
    if verdict.output.strip():
        shown = verdict.output.strip().splitlines()
        lines += ["", f"Your code printed ({len(shown)} lines):", *[f"  | {s}" for s in shown[-20:]]]
    if replay:
        lines += ["", f"Replay just this case: {replay}"]
    lines += [f"({verdict.examples_run} cases in {verdict.duration_s:.1f} s)"]
    return "\n".join(lines)


def _inputs_text(problem: Problem, args: dict) -> list[str]:
    lines = []
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            lines += [f"  {name} {value.dtype.name}{list(value.shape)} =",
                      *("    " + row for row in np.array2string(value, precision=6, threshold=200).splitlines())]
    return lines


def _comparison_text(problem: Problem, outcome: Outcome) -> list[str]:
    c = outcome.comparison
    if c.stage in ("array", "shape", "dtype"):
        lines = ["", f"Problem: {c.message}"]
        if c.stage != "array":
            lines += ["", f"Expected {_shape_text(c.expected.shape)}:",
                      *_grid(c.expected, problem, None, width=_cell_width(c.expected))]
        return lines
    focus = c.worst if c.worst is not None else c.first
    width = max(_cell_width(c.expected), _cell_width(c.actual))
    lines = ["", f"Expected {_shape_text(c.expected.shape)}:", *_grid(c.expected, problem, focus, width=width),
             "", "Got:", *_grid(c.actual, problem, focus, width=width),
             "", "Mismatches (x):", *_grid(c.mismatch, problem, focus, width=width, mask_only=True)]
    summary = [f"{c.count} of {c.expected.size} values wrong"]
    if c.first is not None:
        summary.append(f"first at {_index_text(problem, c.first)}")
    if c.worst is not None and c.stage == "values":
        e, a = c.expected[c.worst], c.actual[c.worst]
        summary.append(f"worst at {_index_text(problem, c.worst)} (expected {e:.7g}, got {a:.7g})")
    lines += ["", "; ".join(summary) + "."]
    if c.stage == "values":
        tol = "exact match required" if problem.exact else f"tolerance |actual - expected| <= {problem.atol:g} + {problem.rtol:g}·|expected|"
        lines += [f"Largest absolute error {c.max_abs:.3g}, largest relative error {c.max_rel:.3g}; {tol}."]
    return lines


def _shape_text(shape: tuple) -> str:
    return "(" + " × ".join(map(str, shape)) + ")"


def _index_text(problem: Problem, index: tuple) -> str:
    names = problem.axis_names
    if names and len(names) == len(index):
        text = ", ".join(f"{n}={i}" for n, i in zip(names, index))
        if names == ["i", "j"]:
            text += f", j - i = {index[1] - index[0]}"
        return f"({text})"
    return str(tuple(index))


def _window(size: int, centre: int) -> tuple[int, int]:
    if size <= WINDOW:
        return 0, size
    start = min(max(centre - WINDOW // 2, 0), size - WINDOW)
    return start, start + WINDOW


def _cell(value, mask_only: bool) -> str:
    if mask_only:
        return "x" if value else "."
    if isinstance(value, (np.floating, float)) and float(value).is_integer() and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.6g}"


def _cell_width(arr: np.ndarray) -> int:
    sample = arr.reshape(-1)[:4096]
    return max((len(_cell(v, False)) for v in sample), default=1)


def _grid(arr: np.ndarray, problem: Problem, focus: tuple | None, *, width: int, mask_only: bool = False) -> list[str]:
    """Rows of a 1-D or 2-D view of ``arr`` (the slice holding ``focus`` for higher ranks), cropped to a
    window around ``focus``; rows and columns labelled with their indices (and axis names if known)."""
    focus = tuple(focus) if focus is not None else (0,) * arr.ndim
    lines = []
    if arr.ndim == 0:
        return ["  " + _cell(arr[()], mask_only)]
    if arr.ndim > 2:
        lead = focus[:-2]
        lines.append(f"  slice [{', '.join(map(str, lead))}, :, :]")
        arr, focus = arr[lead], focus[-2:]
    view = arr if arr.ndim == 2 else arr[None, :]
    fr, fc = focus if arr.ndim == 2 else (0, focus[0])
    r0, r1 = _window(view.shape[0], fr)
    c0, c1 = _window(view.shape[1], fc)
    names = problem.axis_names if arr.ndim == 2 and problem.axis_names and len(problem.axis_names) == 2 else None
    width = max(width, len(str(c1 - 1)))
    if arr.ndim == 2:
        labels = [f"{names[0]}={r}" if names else f"[{r}]" for r in range(r0, r1)]
    else:
        labels = [""]
    label_width = max(len(label) for label in labels)
    pad = " " * (label_width + 3)
    head = pad + " ".join(str(c).rjust(width) for c in range(c0, c1))
    lines.append(head + (" ..." if c1 < view.shape[1] else "") + (f"  ({names[1]})" if names else ""))
    if r0 > 0:
        lines.append(pad + "...")
    for label, r in zip(labels, range(r0, r1)):
        row = " ".join(_cell(view[r, c], mask_only).rjust(width) for c in range(c0, c1))
        lines.append(f"  {label.rjust(label_width)} {row}")
    if r1 < view.shape[0]:
        lines.append(pad + "...")
    return lines
