"""The trusted modules' outputs kept between runs (:class:`grader.grading.kept.KeptOutputs`): each answer checked
before it is kept, a kept one the statement contradicts dropped, and golden.json's outputs of a known mistake
standing in for it while its source is the same."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT
from grader.grading.errors import ReferenceError
from grader.grading.kept import KeptOutputs
from grader.grading.known import Known
from grader.grading.sources import TrustedSources
from grader.problem import problems
from grader.sandbox.operations import Result, Returned
from trusted_fakes import CASES, PROBLEM, error, reference, returned


def kept_outputs(problem=PROBLEM, folder=None, seed_golden=True) -> KeptOutputs:
    sources = TrustedSources(problem, problem.hooks())
    return KeptOutputs(problem, folder, sources, Known(problem, problem.hooks()), seed_golden)


def test_a_kept_reference_output_the_statement_contradicts_is_dropped_on_reading(tmp_path):
    ex = PROBLEM.examples[0]
    kept = kept_outputs(folder=tmp_path)
    cache = kept.caches["reference", True]
    cache.put(kept.known.digest(ex.args), ex.expected.reshape(-1) + 1)  # forged
    cache.put(kept.known.digest(CASES[0]), reference(CASES[0]).reshape(-1))
    cache.save()
    again = kept_outputs(folder=tmp_path)
    assert again.cached("reference", ex.args) is None
    assert np.array_equal(again.cached("reference", CASES[0]), reference(CASES[0]).reshape(-1))


@pytest.mark.parametrize("reply, said", [
    (error(), r"t5_relative_pos\.py raised ValueError: boom, line 3 on t5_relative_pos\(seed=0"),
    (Returned("call", result=Result("tuple")), "returned tuple  \\[\\] on"),
    (returned(np.zeros((2, 2), np.float64)), "returned float64 of shape \\(2, 2\\) on .*problem.toml says float32"),
])
def test_an_answer_that_is_not_the_output_problem_toml_says_is_a_broken_problem(reply, said):
    with pytest.raises(ReferenceError, match=said):
        kept_outputs().keep("reference", CASES[0], True, reply)


def test_a_fresh_reference_output_the_statement_contradicts_is_a_broken_problem():
    ex = PROBLEM.examples[0]
    with pytest.raises(ReferenceError, match="the reference disagrees with the statement's example"):
        kept_outputs().keep("reference", ex.args, True, returned(ex.expected + 1))


def test_a_variant_s_output_is_kept_under_its_mode_whatever_its_shape():
    kept = kept_outputs()
    kept.sources.add("variant", PROBLEM.reference)
    kept.register("variant", PROBLEM.reference)
    out = kept.keep("variant", CASES[0], False, returned(np.zeros(3, np.float32)))
    assert kept.cached("variant", CASES[0], jit=False) is out and kept.cached("variant", CASES[0]) is None


def test_golden_outputs_of_a_known_mistake_stand_in_only_while_its_source_is_the_same_and_where_asked(tmp_path):
    problem = problems.load(ROOT, "rmsnorm")
    path = problem.variants("pitfalls")["ignores_gamma"]
    known = Known(problem, problem.hooks())
    examples = {known.digest(ex.args) for ex in problem.examples}

    def seeded(variant_path, seed_golden=True) -> set[str]:
        kept = kept_outputs(problem, seed_golden=seed_golden)
        kept.sources.add("pitfall_ignores_gamma", variant_path)
        kept.register("pitfall_ignores_gamma", variant_path)
        return set(kept.caches["pitfall_ignores_gamma", True].entries)

    assert seeded(path) == examples
    assert seeded(path, seed_golden=False) == set()
    edited = tmp_path / "ignores_gamma.py"
    edited.write_text(path.read_text() + "\n# edited\n")
    assert seeded(edited) == set()
