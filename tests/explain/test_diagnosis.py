"""What the explanation of a failure says beyond the relations (grader/explain/diagnosis.py), with fake
sessions: parameters with each other's initial values, where a failure shows, a known mistake's outputs and
its signature. Grading end to end is tests/explain/test_feedback.py's."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from grader.core.verdict import Outcome, Status
from grader.explain import diagnosis, ids

E = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)


def session(param_values=None, borderline=None, rtol=1e-5, atol=1e-6):
    hooks = SimpleNamespace(borderline=borderline) if borderline else None
    return SimpleNamespace(problem=SimpleNamespace(exact=False, rtol=rtol, atol=atol, natural_shape=lambda args: E.shape),
                           trusted=SimpleNamespace(hooks=hooks), param_values=lambda: param_values)


def test_parameters_holding_each_other_s_initial_values_are_named():
    graded = {"params/a": np.ones(3), "params/b": np.zeros(3)}
    reference = {"params/a": np.zeros(3), "params/b": np.ones(3)}
    found = diagnosis.parameter_values(session((graded, reference)))
    assert found.id == ids.PARAMETER_VALUES
    assert found.message.startswith("your `a` holds the values the reference gives `b`; your `b` holds the values "
                                    "the reference gives `a`.")
    assert diagnosis.parameter_values(session((reference, reference))) is None
    assert diagnosis.parameter_values(session(None)) is None


def test_a_failure_shows_at_its_comparison_s_stage_or_as_an_error():
    compared = SimpleNamespace(stage="shape")
    assert diagnosis.failing_stage(Outcome("c", {}, Status.FAIL, "", comparison=compared)) == "shape"
    assert diagnosis.failing_stage(Outcome("c", {}, Status.ERROR, "", error={"kind": "exception"})) == "error"
    assert diagnosis.failing_stage(Outcome("c", {}, Status.PASS, "")) is None


def test_a_variant_s_output_matches_within_tolerance_with_non_finite_values_in_the_same_places():
    near = E + np.float32(1e-7)
    assert diagnosis.matches(session(), {}, E, near)
    assert not diagnosis.matches(session(), {}, E, E * 2)
    nan = E.copy()
    nan[0, 0] = np.nan
    assert diagnosis.matches(session(), {}, nan, nan) and not diagnosis.matches(session(), {}, nan, E)
    skip_first = lambda args: np.arange(E.size).reshape(E.shape) == 0  # noqa: E731
    moved = E.copy()
    moved[0, 0] += 1
    assert diagnosis.matches(session(borderline=skip_first), {}, E, moved)  # a borderline cell is skipped


def test_a_signature_fits_an_output_the_relations_call_by_its_name():
    halved = (E / 2).reshape(-1)
    expected = E.reshape(-1)
    fits = lambda signature, **kw: diagnosis.fits(session(), {"n": 2}, None, halved, expected, signature, **kw)  # noqa: E731
    assert fits(ids.CONSTANT_FACTOR, strict=True)
    assert not fits(ids.REDUCED_PRECISION) and not fits(None)
    unexplained = np.random.default_rng(1).normal(size=E.size).astype(np.float32)
    assert diagnosis.fits(session(), {}, None, unexplained, expected, ids.REDUCED_PRECISION)  # nothing against it
    assert not diagnosis.fits(session(), {}, None, unexplained, expected, ids.REDUCED_PRECISION, strict=True)
