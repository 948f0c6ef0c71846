"""Explain a failure: parameter-tree differences, the known mistake it matches, broken properties."""

from __future__ import annotations

import numpy as np

from grader import kinds
from grader.engine import Session
from grader.pool import WorkerFailure
from grader.trusted import ReferenceError
from grader.verdict import Check, Outcome, Pitfall, Status, Verdict


def explain(session: Session, verdict: Verdict, name_only: bool = False) -> None:
    """Add what can be said about the failure to ``verdict`` (runs while the workers are alive).
    ``name_only``: just the known mistake it matches (what `grade check` looks at)."""
    outcome = verdict.counterexample
    if outcome is None or not outcome.args or verdict.status not in (Status.FAIL, Status.ERROR):
        return
    if not name_only:
        verdict.params_diff = params_diff(session, outcome.args)
    if verdict.status == Status.FAIL and outcome.actual is not None:
        verdict.pitfall = name_pitfall(session, outcome)
        if not name_only:
            verdict.checks.extend(property_checks(session, outcome))


def params_diff(session: Session, args: dict) -> list[str]:
    """Missing, extra and misshaped parameters of the learner's Flax tree, by path (empty if equal)."""
    arrays: list = []
    entries = kinds.encode(session.problem.args, args, arrays)
    trees = []
    pairs = ((session.trusted.start(), "reference"), (session.learner, session.key))
    for worker, key in pairs:
        worker.request({"op": "params", "key": key, "args": entries}, arrays)
    session.trusted.acknowledge()
    for worker, _ in pairs:
        try:
            reply = worker.receive(min(60.0, max(session.remaining(), 1.0)), 0, "params")
        except WorkerFailure:  # a diagnostic only; the verdict stands without it
            return []
        trees.append(reply.params)
    expected, actual = trees
    if not expected or actual is None:
        return []
    lines = []
    for path in sorted(set(expected) - set(actual)):
        lines.append(f"missing parameter {path} {tuple(expected[path])}")
    for path in sorted(set(actual) - set(expected)):
        lines.append(f"unexpected parameter {path} {tuple(actual[path])}")
    for path in sorted(set(expected) & set(actual)):
        if expected[path] != actual[path]:
            lines.append(f"parameter {path} has shape {tuple(actual[path])}, expected {tuple(expected[path])}")
    if lines:
        lines.insert(0, "Your parameter tree differs from the one the statement pins, so the outputs cannot "
                        "agree until it matches:")
    return lines


def matches(session: Session, args: dict, variant_out: np.ndarray, actual: np.ndarray) -> bool:
    problem = session.problem
    if variant_out.shape != actual.shape or variant_out.dtype != actual.dtype:
        return False
    if session.trusted.agrees(args, variant_out, actual):  # the variant's output taken as the expected one
        return True
    # Both non-finite in the same places and equal elsewhere also counts as the same mistake.
    both = ~np.isfinite(variant_out) & ~np.isfinite(actual)
    if both.any() and np.array_equal(np.isfinite(variant_out), np.isfinite(actual)):
        keep = np.isfinite(actual)
        return bool(np.allclose(actual[keep], variant_out[keep], rtol=problem.rtol, atol=problem.atol))
    return False


def name_pitfall(session: Session, outcome: Outcome) -> Pitfall | None:
    """The known-wrong variant whose outputs agree with the learner's: on the smallest failing input,
    and on every other input seen in this run, which tells apart variants that coincide on small inputs."""
    variants = session.problem.variants("pitfalls")
    if not variants:
        return None
    keys = {f"pitfall_{name}": path for name, path in variants.items()}
    trusted = session.trusted
    trusted.start(keys)
    jit = session.options.jit and session.jit_error is None  # as the learner's code ran: bf16 rounds differently
    outputs = {key: trusted.cached(key, outcome.args, jit) for key in keys}
    missing = [key for key, out in outputs.items() if out is None]
    for key in missing:
        trusted.request(key, outcome.args, jit=jit)
    for key in missing:
        try:
            outputs[key] = trusted.collect(key, outcome.args)
        except ReferenceError:
            pass
    actual = outcome.actual.reshape(-1)
    candidates = [key for key, out in outputs.items()
                  if out is not None and matches(session, outcome.args, out, actual)]
    probes = [(args, actual) for args, actual in session.seen if args is not outcome.args]
    if len(candidates) > 1 and probes:
        candidates = [key for key in candidates
                      if all(out is not None and matches(session, args, out, actual)
                             for (args, actual), out in zip(probes, trusted.outputs(key, [a for a, _ in probes])))]
    if len(candidates) != 1:
        return None
    name = candidates[0].removeprefix("pitfall_")
    return Pitfall(name, read_message(variants[name]))


def read_message(path) -> str:
    """The ``MESSAGE`` constant of a variant module, read without importing it."""
    import ast

    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "MESSAGE" for t in node.targets):
            return ast.literal_eval(node.value)
    return ""


def property_checks(session: Session, outcome: Outcome) -> list[Check]:
    """Reference-free checks from ``problems/<slug>/properties.py`` on the failing output."""
    module = session.problem.properties()
    if module is None or outcome.comparison is None or outcome.comparison.actual is None:
        return []
    checks = []
    for check in getattr(module, "PROPERTIES", []):
        problem_text = check(outcome.args, outcome.comparison.actual)
        name = f"property: {check.__name__.replace('_', ' ')}"
        checks.append(Check(name, Status.FAIL if problem_text else Status.PASS,
                            problem_text or (check.__doc__ or "").strip().splitlines()[0]))
    return checks
