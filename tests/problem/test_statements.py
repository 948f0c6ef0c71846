"""What the statements and hints tell a learner to run is what the grader runs: every `--part NAME` they
name is a part of that problem (a module class, one of its steps or a helper function its stub asks for)."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from grader.problem import problems

SLUGS = sorted(p.parent.name for p in (ROOT / "problems").glob("*/problem.toml"))
PART = re.compile(r"--part\s+`?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)")


@pytest.mark.parametrize("slug", SLUGS)
def test_every_part_a_statement_or_hint_names_is_one(slug):
    problem = problems.load(ROOT, slug)
    named = set()
    for name in ("README.md", "hints.toml"):
        path = problem.folder / name
        if path.is_file():
            named |= set(PART.findall(path.read_text()))
    named -= {"NAME"}  # the option's own placeholder
    assert named <= set(problem.part_names()), (slug, named - set(problem.part_names()))


def test_the_helpers_are_the_functions_the_stub_asks_for():
    assert problems.load(ROOT, "t5_attention").helpers() == ["relative_position_bucket"]
    assert problems.load(ROOT, "t5_relative_bias").helpers() == ["relative_position_bucket"]
    assert problems.load(ROOT, "t5_forward").helpers() == []  # given complete: nothing to write there
    assert problems.load(ROOT, "t5_relative_pos").helpers() == []  # the entry itself is no helper


def test_the_steps_are_the_methods_of_a_layer_the_stub_asks_for():
    steps = ["split_heads", "merge_heads", "scores", "weights", "attend"]
    assert problems.load(ROOT, "shaw_relative_attention").methods() == [f"ShawAttention.{s}" for s in steps]
    assert problems.load(ROOT, "mini_t5_forward").methods() == []  # its methods are __call__ and setup alone


def test_the_attention_layers_and_the_models_name_the_positions_of_their_rows():
    for slug in ("t5_attention", "shaw_relative_attention", "transformer_xl_attention"):
        assert problems.load(ROOT, slug).positions == {"x": 0}
    for slug in ("mini_t5_forward", "t5_forward"):
        assert problems.load(ROOT, slug).positions == {"x_dec_ids": 0}
    assert problems.load(ROOT, "rmsnorm").positions == {}  # rows independent of each other: nothing to check


@pytest.mark.parametrize("slug", SLUGS)
def test_every_known_mistake_has_a_learner_written_twin_in_the_corpus(slug):
    """The mistakes a statement lists are the problem's known-wrong variants, which the grader names. Each has a
    submission in tests/submissions/<slug>/ written as a learner would (not the variant's text) and marked as
    that mistake (`listed`): tests/grading/test_precision.py grades a sample of them and holds each to its
    name, and benchmarks/feedback.py grades them all."""
    import tomllib

    manifest = ROOT / "tests" / "submissions" / slug / "manifest.toml"
    listed = {entry.get("listed") for entry in tomllib.loads(manifest.read_text()).values()} if manifest.is_file() else set()
    missing = sorted(set(problems.load(ROOT, slug).variants("pitfalls")) - listed)
    assert not missing, f"{slug}: no learner-written submission in the corpus is the known mistake {missing}"
