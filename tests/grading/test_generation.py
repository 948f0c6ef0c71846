"""Hypothesis's part of a run (:mod:`grader.grading.generation`): the same inputs every run, drawn without the
literals of the modules this process imported, and the grader's own exceptions found inside Hypothesis's."""

from __future__ import annotations

import pytest

from conftest import ROOT
from grader.grading import generation
from grader.grading.session import Options
from grader.grading.workers import StopGrading
from grader.problem import problems

PROBLEM = problems.load(ROOT, "t5_relative_pos")


def drawn(draws=None) -> list[dict]:
    found: list[dict] = []
    generation.run_generated(type("Drawing", (), {"problem": PROBLEM})(), [], collect=found, draws=draws)
    return found


def test_the_inputs_drawn_are_the_same_every_run_and_another_seed_draws_others():
    first = drawn()
    assert len(first) == PROBLEM.max_examples and drawn() == first
    assert drawn((generation.DRAW_SEED + 1, 5)) != first[:5]


def test_the_local_constants_are_left_out_while_drawing_and_put_back_after():
    from hypothesis.internal.conjecture import providers

    before = providers._get_local_constants
    with generation.without_local_constants():
        assert providers._get_local_constants is not before
    assert providers._get_local_constants is before


def test_the_grader_s_exception_is_found_inside_groups_and_chains():
    stop = StopGrading(type("Outcome", (), {"message": "m"})())
    try:
        try:
            raise stop
        except StopGrading as exc:
            raise ValueError("wrapped") from exc
    except ValueError as chained:
        group = BaseExceptionGroup("several", [KeyError("k"), chained])
    assert generation._find(group, (StopGrading,)) is stop
    assert generation._find(ValueError("alone"), (StopGrading,)) is None


@pytest.mark.parametrize("secret, found", [(None, None), (7, (7, max(4, PROBLEM.max_examples // 2)))])
def test_the_instructor_s_secret_inputs_are_half_as_many_as_the_public_ones(secret, found):
    assert generation.secret_draws(PROBLEM, Options(secret_seed=secret)) == found
