"""A kata that teaches a trick says so when a pass does without it: a note, never a failure."""

from __future__ import annotations

import pytest

from conftest import ROOT
from grader.problem import problems, teaches

REL_SHIFT = problems.load(ROOT, "rel_shift")


def source(slug: str, name: str | None = None) -> bytes:
    folder = ROOT / "solutions" / slug
    return (folder / "alternatives" / f"{name}.py" if name else folder / f"{slug}.py").read_bytes()


def test_the_reference_uses_the_trick_and_gets_no_note():
    assert REL_SHIFT.teaches["calls"] and teaches.note(REL_SHIFT.teaches, source("rel_shift")) is None


@pytest.mark.parametrize("name", ["vmap_dynamic_slice", "einsum_one_hot", "plain_loops"])
def test_a_right_answer_without_the_trick_gets_a_note_naming_what_it_did_instead(name):
    said = teaches.note(REL_SHIFT.teaches, source("rel_shift", name))
    assert said and REL_SHIFT.teaches["what"] in said and "right" in said


def test_a_gather_is_named_as_what_it_calls_instead():
    gather = b"import jax.numpy as jnp\ndef rel_shift(seed, x):\n    return jnp.take_along_axis(x, idx, axis=1)\n"
    said = teaches.note(REL_SHIFT.teaches, gather)
    assert "it calls take_along_axis" in said and "it calls no pad, reshape" in said


def test_a_problem_that_declares_nothing_says_nothing():
    assert teaches.note({}, source("rel_shift", "plain_loops")) is None
    assert problems.load(ROOT, "t5_relative_pos").teaches == {}


def test_a_malformed_teaches_table_is_an_instructors_error_naming_the_key():
    meta = {"title": "x", "entry": "x", "args": {"seed": "int"}, "output": {"dtype": "float32", "shape": ["1"]},
            "tolerance": {"exact": True},
            "teaches": {"what": "a trick", "calls": "pad"}}
    with pytest.raises(problems.ProblemError, match="teaches.calls"):
        problems.from_metadata(ROOT, "x", meta)


@pytest.mark.grading
def test_a_pass_without_the_trick_stays_a_pass_with_its_note(grade_json):
    code, report = grade_json("rel_shift", "--file", ROOT / "solutions" / "rel_shift" / "alternatives" / "plain_loops.py")
    assert (code, report["status"]) == (0, "pass")
    assert [c["status"] for c in report["checks"] if c["name"] == "teaches"] == ["warn"]
    code, report = grade_json("rel_shift", "--file", ROOT / "solutions" / "rel_shift" / "rel_shift.py")
    assert (code, report["status"]) == (0, "pass") and not [c for c in report["checks"] if c["name"] == "teaches"]
