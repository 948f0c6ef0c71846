"""The parts of a model: the first one that is wrong, and grading one alone (`grade <problem> --part NAME`).

A problem whose stub asks for Flax module classes has parts (:meth:`grader.problem.problems.Problem.parts`), and
so do the methods of those classes that the stub asks for (a layer's steps: its scores, its weights) and the
helper functions beside them (:meth:`~grader.problem.problems.Problem.part_names`). The
reference's forward pass is recorded in the trusted worker: every call of a part, with its path in the
module tree, its attributes, variables, arguments and output (:mod:`grader.sandbox.intercept`). Then the
learner's class of each recorded call runs alone, in the learner's worker, on those same variables and
arguments, in the order the calls finished, so a block comes after the modules it calls. The first call
whose output differs is the first wrong part: its own body holds a mistake, or, when every module it calls
is right, the way it wires them.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

import numpy as np

from grader.core.compare import same_values
from grader.explain import ids
from grader.explain.relations.words import listing
from grader.sandbox import operations
from grader.sandbox.pool import WorkerFailure
from grader.core.verdict import Diagnosis, Part, Status, Verdict

VALUES_SHOWN = 8  # values of a wrong part's output row shown in a report
HIDDEN = -1e9  # a score at or below this (MASK_VALUE, -inf) gets weight 0 from a softmax: hidden, however written


def describe_value(name: str, encoded: dict, arrays: list) -> str:
    """How an argument of a recorded call reads in a report: ``x (4, 8) float32``, ``mask (3, 3) bool,
    causal``."""
    if "array" not in encoded:
        return f"{name}={encoded['value']!r}"
    arr = arrays[encoded["array"]]
    text = f"{name} {tuple(arr.shape)} {arr.dtype.name}"
    if arr.dtype == bool and arr.ndim == 2:
        if arr.all():
            text += ", all True"
        elif np.array_equal(arr, np.tril(np.ones(arr.shape, dtype=bool))):
            text += ", causal (True where j <= i)"
    return text


def call_text(call: dict, arrays: list) -> str:
    names = list(call["names"]) + [f"arg{i}" for i in range(len(call["names"]), len(call["args"]))]
    shown = [describe_value(n, a, arrays) for n, a in zip(names, call["args"])]
    shown += [describe_value(k, v, arrays) for k, v in call["kwargs"].items()]
    return ", ".join(shown)


def where(call: dict) -> str:
    return call["path"] or f"the top-level {call['cls']}"


def part_name(call: dict) -> str:
    """The name `grade --part` takes for what ``call`` called: a class, ``Class.method`` or a function."""
    return f"{call['cls']}.{call['method']}" if call.get("method") else call["cls"]


def run_call(session, call: dict, arrays: list):
    """The learner's class of ``call`` applied alone: its reply (its output, or what it raised)."""
    used = sorted({e["array"] for e in [*call["args"], *call["kwargs"].values(), *call["variables"].values()]
                   if "array" in e})
    index = {old: new for new, old in enumerate(used)}

    def renumber(encoded: dict) -> dict:
        return {"array": index[encoded["array"]]} if "array" in encoded else encoded

    bound = 16 * arrays[call["output"]["array"]].size + 4096
    session.workers.ask(operations.part(session.key, call, [renumber(a) for a in call["args"]],
                                        {k: renumber(v) for k, v in call["kwargs"].items()},
                                        {k: renumber(v) for k, v in call["variables"].items()},
                                        [arrays[i] for i in used], bound))
    return session.workers.receive(bound, "part")


def layout(expected: np.ndarray, actual: np.ndarray, rtol: float, atol: float) -> str | None:
    """How ``actual``, of another shape than ``expected``, holds ``expected``'s values: its axes in another
    order, an axis of size 1 left out or added, or both (None where no such rearrangement gives them back)."""
    e, a = np.squeeze(expected), np.squeeze(actual)
    if e.ndim != a.ndim or e.ndim > 6 or sorted(e.shape) != sorted(a.shape):
        return None
    for order in itertools.permutations(range(a.ndim)):
        moved = a.transpose(order)
        if moved.shape == e.shape and same_values(e, moved, rtol, atol).all():
            break
    else:
        return None
    size_one = (f"an axis of size 1 {'left out' if actual.ndim < expected.ndim else 'added'}"
                if actual.ndim != expected.ndim else "")
    kept = [axis for axis, n in enumerate(actual.shape) if n != 1]  # the axes of yours that the order moves
    swapped = [kept[i] for i, j in enumerate(order) if i != j]
    axes = ("" if not swapped else f"axes {swapped[0]} and {swapped[1]} swapped" if len(swapped) == 2
            else f"the axes of size above 1 in another order ({', '.join(str(kept[j]) for j in order)})")
    return (f"{' and '.join(w for w in (axes, size_one) if w)} (shape {tuple(actual.shape)} where "
            f"{tuple(expected.shape)} is expected)")


def heads(expected: np.ndarray, actual: np.ndarray, bad: np.ndarray, num_heads, rtol: float, atol: float) -> str | None:
    """Which heads of a part's per-head output differ (the one axis of size ``num_heads``, in an output of
    three axes or more): the heads that agree where some do, or the order the heads come in where yours are
    the reference's rearranged. None where that axis is not known, or where every head is wrong otherwise."""
    if not isinstance(num_heads, int) or num_heads < 2 or expected.ndim < 3 or expected.shape.count(num_heads) != 1:
        return None
    axis = expected.shape.index(num_heads)
    e, a = np.moveaxis(expected, axis, 0), np.moveaxis(actual, axis, 0)
    wrong = [h for h in range(num_heads) if np.moveaxis(bad, axis, 0)[h].any()]
    if len(wrong) < num_heads:
        right = [h for h in range(num_heads) if h not in wrong]
        return (f"{_heads(wrong)} of {num_heads} differ{'s' if len(wrong) == 1 else ''}; "
                f"{_heads(right)} agree{'s' if len(right) == 1 else ''}")
    source = [next((g for g in range(num_heads) if same_values(e[g], a[h], rtol, atol).all()), None)
              for h in range(num_heads)]
    if None in source:
        return None
    return ("your heads are the reference's in another order: "
            + ", ".join(f"your head {h} is its head {g}" for h, g in enumerate(source)))


def _heads(numbers: list[int]) -> str:
    return f"head{'s' * (len(numbers) > 1)} {listing(numbers, limit=len(numbers))}"


def difference(session, call: dict, arrays: list, reply) -> tuple[str, list[str]] | None:
    """How the learner's output of ``call`` differs from the reference's (None if it agrees): a sentence,
    and lines that show the row holding the worst value."""
    from grader.grading.workers import error_message

    expected = arrays[call["output"]["array"]]
    if not reply.ok:
        return f"it raised {error_message(reply.error)}", []
    result = reply.result
    if result.type != "array":
        return f"it returned a value of type {result.type}, not an array", []
    if result.shape is not None and tuple(result.shape) != expected.shape:
        return f"it returned shape {tuple(result.shape)}, expected {tuple(expected.shape)}", []
    if result.array is None:  # its bytes did not come back: a dtype the grader does not read, or too many
        return (f"it returned an array of dtype {result.dtype} (shape {tuple(result.shape or ())}), where a "
                f"{expected.dtype.name} array was expected"), []
    actual = result.array
    if actual.shape != expected.shape:
        return f"it returned shape {tuple(actual.shape)}, expected {tuple(expected.shape)}", []
    problem = session.problem
    bad = wrong_values(problem, call, expected, actual)
    if not bad.any():
        return None
    with np.errstate(invalid="ignore"):
        err = np.where(bad, np.nan_to_num(np.abs(actual.astype(np.float64) - expected), nan=np.inf), -1.0)
    worst = np.unravel_index(int(np.argmax(err)), expected.shape)
    sentence = (f"{int(bad.sum())} of {expected.size} values of its output differ, the worst at "
                f"{tuple(int(i) for i in worst)}: expected {expected[worst]:.6g}, got {actual[worst]:.6g}")
    per_head = heads(expected, actual, bad, call["fields"].get("num_heads"), problem.rtol, problem.atol)
    if per_head:
        sentence += f"; {per_head}"
    details = []
    if expected.ndim >= 1:
        row = worst[:-1]
        label = f"row {', '.join(str(int(i)) for i in row)}" if row else "output"
        shown = slice(0, min(expected.shape[-1], VALUES_SHOWN))
        fmt = {"float_kind": lambda v: f"{v:.4g}"}
        details = [f"{label}, expected: {np.array2string(expected[row][shown], formatter=fmt)}",
                   f"{label}, yours:    {np.array2string(actual[row][shown], formatter=fmt)}"]
        if expected.shape[-1] > VALUES_SHOWN:
            details[-2:] = [line + f" (first {VALUES_SHOWN} of {expected.shape[-1]})" for line in details[-2:]]
    return sentence, details


def wrong_values(problem, call: dict, expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Which values of the learner's output of ``call`` (of the reference's shape) differ from the reference's."""
    canonical = getattr(problem.hooks(), "canonical_part", None)
    if canonical is None:
        bad = ~same_values(expected, actual, problem.rtol, problem.atol)
    else:  # compared in the one form of the outputs the layer treats alike (solutions/<slug>/grading.py)
        bad = ~same_values(canonical(part_name(call), expected), canonical(part_name(call), actual),
                           problem.rtol, problem.atol)
    with np.errstate(invalid="ignore"):
        bad &= ~((expected <= HIDDEN) & (actual <= HIDDEN))  # a key hidden with -inf, the reference's MASK_VALUE
    return bad


def wrong_part(session, call: dict, arrays: list, reply) -> Part | None:
    """The learner's output of ``call`` (its ``reply``) as a wrong part, or None where it agrees."""
    found = difference(session, call, arrays, reply)
    if found is None:
        return None
    sentence, details = found
    given = "on the inputs" if call.get("function") else "on the reference's parameters and on the inputs"
    expected, actual = arrays[call["output"]["array"]], reply.result.array if reply.ok else None
    rearranged = (layout(expected, actual, session.problem.rtol, session.problem.atol)
                  if actual is not None and actual.shape != expected.shape else None)
    return Part(call["path"], f"your {part_name(call)}, run alone {given} the reference gave it "
                              f"({call_text(call, arrays)}): {sentence}.", details,
                Diagnosis(ids.VALUES_REARRANGED, f"Your {part_name(call)} computes the right values in another "
                                                 f"layout: {rearranged}.") if rearranged else None,
                expected=expected, actual=actual,
                mismatch=(wrong_values(session.problem, call, expected, actual)
                          if actual is not None and actual.shape == expected.shape else None))


def first_wrong_part(session, args: dict, command: str) -> Part | None:
    """The first part, in the order the reference's calls finish, whose output differs on ``args``
    (None when every part agrees, when the problem has fewer than two parts, or when the learner's
    worker fails meanwhile). ``command`` is how the learner runs `grade`, for the hint."""
    problem = session.problem
    if len(problem.part_names()) < 2 or session.shared:
        return None
    calls, arrays = session.trusted.capture(args)
    for call in calls:
        try:
            reply = run_call(session, call, arrays)
        except WorkerFailure:
            return None
        if not reply.ok and (reply.error["kind"] == "missing" or (call.get("function") or call.get("method"))
                             and reply.error["kind"] == "not_implemented"):
            continue  # a part the learner's file does not have or use: its work is done elsewhere
        part = wrong_part(session, call, arrays, reply)
        if part is not None:
            hint = f"Check this part alone: {command} {problem.slug} --part {part_name(call)}"
            return replace(part, message=part.message + " Every part that runs before it agrees.",
                           details=part.details + [hint])
    return None


def grade_part(problem, learner_path, name: str, options, launch=None) -> Verdict:
    """`grade <problem> --part NAME`: the learner's class ``name`` alone, on every call the reference's
    forward pass makes of it, over the fixed examples and the drawn inputs. It passes once that class is
    right, whatever the rest of the file does (a class that calls others, a block, needs those too)."""
    from grader.grading.engine import Session, StopGrading, draw_inputs, kept_inputs
    from grader.problem.problems import ProblemError
    from grader.grading.errors import ReferenceError

    session = Session(problem, learner_path, options, launch=launch)
    verdict = Verdict(problem.slug, Status.PASS, "", isolation=session.isolation)
    calls_checked = inputs_used = 0
    started = time.monotonic()
    try:
        path, kept = kept_inputs(session)
        session.load()
        session.drawn = kept if kept is not None else draw_inputs(session, path)
        session.workers.ready()
        for args in [ex.args for ex in problem.examples] + session.drawn:
            calls, arrays = session.trusted.capture(args)
            inputs_used += 1
            for call in (c for c in calls if part_name(c) == name):
                reply = run_call(session, call, arrays)
                if not reply.ok and reply.error["kind"] in ("not_implemented", "missing") and not calls_checked:
                    verdict.status = Status.NOT_STARTED
                    said = reply.error["message"]  # the type's name where the exception says nothing
                    verdict.message = (said if said not in ("", reply.error["type"])
                                       else f"your {name} still raises NotImplementedError: fill in its TODO")
                    return verdict
                calls_checked += 1
                part = wrong_part(session, call, arrays, reply)
                if part is not None:
                    verdict.status = Status.FAIL if reply.ok else Status.ERROR
                    verdict.message = f"your {name} differs from the reference's at {where(call)}"
                    verdict.first_wrong_part = part
                    verdict.diagnosis = part.diagnosis
                    return verdict
        if not calls_checked:
            raise ProblemError(f"the problem is broken, not your code: the reference's forward pass makes no "
                               f"call of {name} that can be recorded")
        verdict.message = (f"all {calls_checked} calls of {name} in the reference's forward pass on "
                           f"{inputs_used} model inputs match")
    except StopGrading as stop:
        verdict.status, verdict.message = stop.outcome.status, stop.outcome.message
    except WorkerFailure as failure:
        outcome = session.workers.failure_outcome(f"{name} alone", {}, failure)
        verdict.status, verdict.message = outcome.status, outcome.message
    except ReferenceError as exc:
        raise ProblemError(f"the problem is broken, not your code: {exc}") from None
    finally:
        verdict.examples_run = calls_checked
        verdict.output = session.close()
        verdict.duration_s = round(time.monotonic() - started, 3)
    return verdict
