"""What a learner's re-grade of the same failure keeps from the first: the known mistakes' outputs and the
reference's recorded module calls on the failing input, so that explaining it again starts no reference worker."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT
from grader.grading import trusted as trusted_mod
from grader.grading import trusted_worker
from grader.problem import problems


@pytest.mark.grading
def test_a_regrade_of_the_same_failure_names_it_again_without_a_reference_worker(grade_json, tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path / "cache"))  # empty: the first grade computes everything
    wrong = tmp_path / "t5_attention.py"
    wrong.write_text(problems.load(ROOT, "t5_attention").variants("pitfalls")["scaled_scores"].read_text())
    started = []
    real = trusted_worker.Worker

    def counted(spec, *args, **kwargs):
        started.append(spec)
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(trusted_worker, "Worker", counted)
    code, first = grade_json("t5_attention", "--file", wrong)
    assert code == 1 and first["pitfall"]["id"] == "scaled_scores" and started
    started.clear()
    wrong.write_text(wrong.read_text() + "\n# an edit that changes nothing\n")
    code, again = grade_json("t5_attention", "--file", wrong)
    assert started == []  # every output, tree and recorded call it needs was kept
    for key in ("status", "message", "pitfall", "diagnosis", "first_wrong_part"):
        assert again[key] == first[key], key


# -- the known mistakes' outputs on the fixed examples, kept in golden.json ---------------------------------

def checkout_copy(tmp_path, slug: str):
    checkout = tmp_path / "checkout"
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part / slug, checkout / part / slug)
    return checkout


def test_golden_outputs_of_the_known_mistakes_stand_in_for_running_them_while_their_source_is_the_same(tmp_path):
    checkout = checkout_copy(tmp_path, "rmsnorm")
    problem = problems.load(checkout, "rmsnorm")
    trusted = trusted_mod.Trusted(problem, use_cache=False)
    names = trusted.pitfalls()
    examples = {trusted.digest(ex.args) for ex in problem.examples}
    for name in names:  # every known mistake, on every fixed example, without a worker
        assert set(trusted.caches[f"pitfall_{name}", True].entries) == examples, name
        assert not trusted.caches[f"pitfall_{name}", False].entries  # run eagerly, it may round otherwise
    assert trusted.worker.process is None
    toml = checkout / "solutions" / "rmsnorm" / "pitfalls.toml"  # one known mistake edited since
    toml.write_text(toml.read_text().replace("Adds eps after the square root", "Adds eps after the root (edited)", 1))
    edited = trusted_mod.Trusted(problems.load(checkout, "rmsnorm"), use_cache=False)
    edited.pitfalls()
    stale = [n for n in names if not edited.caches[f"pitfall_{n}", True].entries]
    assert stale == ["eps_outside_sqrt"]
    unseeded = trusted_mod.Trusted(problems.load(checkout, "rmsnorm"), use_cache=False, golden_pitfalls=False)
    unseeded.pitfalls()
    assert not any(unseeded.caches[f"pitfall_{n}", True].entries for n in names)


@pytest.mark.grading
def test_check_fails_golden_outputs_that_a_known_mistake_no_longer_gives(tmp_path, monkeypatch):
    from grader.instructor import check

    checkout = checkout_copy(tmp_path, "rmsnorm")
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path / "cache"))
    golden = checkout / "solutions" / "rmsnorm" / "golden.json"
    entries = json.loads(golden.read_text())
    entries[0]["pitfalls"]["ignores_gamma"]["output"][0] += 1.0  # a stored output no known mistake gives
    golden.write_text(json.dumps(entries))
    trusted = trusted_mod.Trusted(problems.load(checkout, "rmsnorm"), golden_pitfalls=False)
    try:
        rows = check.check_outputs(problems.load(checkout, "rmsnorm"), trusted, update_golden=False)
    finally:
        trusted.close()
    row = next(r for r in rows if r.item == "golden outputs")
    assert not row.ok and "(ignores_gamma)" in row.detail and "--update-golden" in row.detail
