"""What a learner's re-grade of the same failure keeps from the first: the known mistakes' outputs and the
reference's recorded module calls on the failing input, so that explaining it again starts no reference worker."""

from __future__ import annotations

import pytest

from conftest import ROOT
from grader.grading import trusted as trusted_mod
from grader.problem import problems


@pytest.mark.grading
def test_a_regrade_of_the_same_failure_names_it_again_without_a_reference_worker(grade_json, tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path / "cache"))  # empty: the first grade computes everything
    wrong = tmp_path / "t5_attention.py"
    wrong.write_text(problems.load(ROOT, "t5_attention").variants("pitfalls")["scaled_scores"].read_text())
    started = []
    real = trusted_mod.Worker

    def counted(spec, *args, **kwargs):
        started.append(spec)
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(trusted_mod, "Worker", counted)
    code, first = grade_json("t5_attention", "--file", wrong)
    assert code == 1 and first["pitfall"]["id"] == "scaled_scores" and started
    started.clear()
    wrong.write_text(wrong.read_text() + "\n# an edit that changes nothing\n")
    code, again = grade_json("t5_attention", "--file", wrong)
    assert started == []  # every output, tree and recorded call it needs was kept
    for key in ("status", "message", "pitfall", "diagnosis", "first_wrong_part"):
        assert again[key] == first[key], key
