"""The trusted modules' sources (:class:`grader.grading.sources.TrustedSources`): read once, the reference first,
and the key of a known mistake's outputs changing with every file they depend on."""

from __future__ import annotations

import shutil

from conftest import ROOT
from grader.grading.sources import TrustedSources
from grader.problem import problems


def checkout(tmp_path, slug: str = "t5_relative_pos"):
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part / slug, tmp_path / part / slug)
    return problems.load(tmp_path, slug)


def test_a_module_is_read_once_and_the_reference_comes_first(tmp_path):
    problem = checkout(tmp_path)
    sources = TrustedSources(problem, problem.hooks())
    variant = tmp_path / "variant.py"
    variant.write_text("x = 1\n")
    sources.add("variant", variant)
    variant.write_text("x = 2\n")
    sources.add("variant", tmp_path / "elsewhere.py")  # known already: neither read nor moved
    assert [(key, source) for key, _, source in sources.items()][1:] == [("variant", b"x = 1\n")]
    assert sources.items()[0][0] == "reference" and sources.paths["variant"] == variant
    hooks = problem.solution_folder / "grading.py"
    assert sources.depends_on() == [problem.reference, hooks]
    assert sources.depends_on(variant) == [variant, problem.reference, hooks]


def test_a_known_mistake_s_key_changes_with_its_source_the_reference_and_the_hooks(tmp_path):
    problem = checkout(tmp_path)
    variant = tmp_path / "variant.py"
    variant.write_text("x = 1\n")

    def key() -> str:
        sources = TrustedSources(problem, problem.hooks())
        sources.add("pitfall_x", variant)
        return sources.variant_source_key("pitfall_x")

    first = key()
    assert key() == first
    keys = {first}
    for path in (variant, problem.reference, problem.solution_folder / "grading.py"):
        path.write_text(path.read_text() + "\n# edited\n")
        keys.add(key())
    assert len(keys) == 4
