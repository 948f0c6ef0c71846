"""The learner's own path: a stub edited in place keeps its steps and helpers as parts.

What a stub asks for is read from the untouched stub (``.grade/pristine/`` in a handout, git in a
checkout), never from the file the learner edits, whose TODOs are gone once filled in. So a learner who
fills in the stub where it lies gets the verdict, the named mistake and the first wrong part that
``--file`` gives on the same code, and every ``--part`` a report suggests.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT
from grader.core.launch import python_command
from grader.problem import pristine, problems
from grader.sandbox import zygote

CORPUS = ROOT / "tests" / "submissions"
STEPS = {"t5_attention": ["T5Attention.split_heads", "T5Attention.merge_heads", "T5Attention.scores",
                          "T5Attention.weights"]}


def solved(slug: str) -> str:
    """The stub with every TODO filled in: the reference's text (what a learner who is done has)."""
    return (ROOT / "solutions" / slug / f"{slug}.py").read_text()


def copy_problem(root: Path, slug: str) -> None:
    for kind in ("problems", "solutions"):
        shutil.copytree(ROOT / kind / slug, root / kind / slug)


def test_a_handouts_stub_edited_in_place_keeps_its_steps_and_helpers(tmp_path):
    copy_problem(tmp_path, "t5_attention")
    stub = tmp_path / "problems" / "t5_attention" / "t5_attention.py"
    (tmp_path / ".grade" / "pristine").mkdir(parents=True)
    shutil.copy(stub, tmp_path / ".grade" / "pristine" / stub.name)
    stub.write_text(solved("t5_attention"))
    problem = problems.load(tmp_path, "t5_attention")
    assert problem.methods() == STEPS["t5_attention"]
    assert problem.helpers() == ["relative_position_bucket"]


def test_a_checkouts_stub_edited_in_place_keeps_its_steps_through_git(tmp_path):
    copy_problem(tmp_path, "t5_attention")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=k", "-c", "user.email=k@k"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "the katas"], check=True)
    stub = tmp_path / "problems" / "t5_attention" / "t5_attention.py"
    stub.write_text(solved("t5_attention"))
    subprocess.run([*git, "commit", "-qam", "my work"], check=True)  # a learner's own commit is passed over
    cache = tmp_path / "cache"
    assert problems.load(tmp_path, "t5_attention").methods() == STEPS["t5_attention"]
    text, source = pristine.stub(tmp_path, "t5_attention", cache)
    assert pristine.is_untouched(text) and source.startswith("git commit")
    assert list((cache / "pristine").glob("t5_attention-*.py"))  # kept by HEAD: the next run starts no git


def test_without_an_untouched_copy_the_stub_is_read_as_it_is(tmp_path):
    copy_problem(tmp_path, "t5_attention")  # a problem being written: no git, no kept copy
    assert problems.load(tmp_path, "t5_attention").methods() == STEPS["t5_attention"]


# -- both ways, end to end --------------------------------------------------------------------------------

SAMPLE = [("t5_attention", "half_the_buckets_when_causal"),  # a helper (the bucketing) at fault
          ("shaw_relative_attention", "scores_content_only_loop")]  # a step (the scores) at fault


@pytest.fixture(scope="module")
def learners_clone(tmp_path_factory):
    """A clone of this checkout, as a learner has it (the stubs untouched in git); one cache folder for it
    and the checkout (the same references: their outputs are computed once)."""
    base = tmp_path_factory.mktemp("learner")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(base / "katas")], check=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADE_CACHE_DIR", str(base / "cache"))
        yield base / "katas"
        zygote.stop(base / "cache")


def graded(cwd: Path, *argv: str) -> dict:
    done = subprocess.run([*python_command("grader.cli"), *argv, "--json"], cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    return json.loads(done.stdout)


def summary(report: dict) -> tuple:
    part = report["first_wrong_part"]
    return (report["status"], report["pitfall"]["id"] if report["pitfall"] else None, part and part["path"])


@pytest.mark.grading
@pytest.mark.parametrize("slug, name", SAMPLE)
def test_a_stub_edited_in_place_gets_what_file_gets(learners_clone, slug, name):
    """The corpus file copied over the stub (the learner's path) and given with --file (the tests' path):
    the same verdict, the same named mistake, the same first wrong part, which is the manifest's."""
    if not (learners_clone / "problems" / slug).is_dir():
        pytest.skip("the clone holds only what is committed")
    source = CORPUS / slug / f"{name}.py"
    shutil.copy(source, learners_clone / "problems" / slug / f"{slug}.py")
    in_place = graded(learners_clone, slug)
    with_file = graded(ROOT, slug, "--file", str(source))
    expected = tomllib.loads((CORPUS / slug / "manifest.toml").read_text())[name]["part"]
    assert summary(in_place) == summary(with_file), (summary(in_place), summary(with_file))
    assert summary(in_place)[2] == expected


@pytest.mark.grading
def test_every_part_a_report_suggests_works_on_a_stub_edited_in_place(learners_clone):
    stub = learners_clone / "problems" / "t5_attention" / "t5_attention.py"
    stub.write_text((CORPUS / "t5_attention" / "position_bias_never_added.py").read_text())
    report = graded(learners_clone, "t5_attention", "--part", "T5Attention.scores")
    assert report["status"] == "fail" and report["first_wrong_part"]["path"] == "scores", report["message"]
    report = graded(learners_clone, "t5_attention", "--part", "relative_position_bucket")
    assert report["status"] == "pass", report["message"]


def test_the_reference_calls_kept_are_keyed_by_the_parts_recorded(tmp_path, monkeypatch):
    """A call kept for one list of parts is not read back for another (which step is named must not
    depend on what an earlier run recorded)."""
    from types import SimpleNamespace

    from grader.grading.trusted import Trusted

    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path / "cache"))
    problem = problems.load(ROOT, "t5_attention")
    trusted = Trusted(problem)
    asked = []
    reply = SimpleNamespace(ok=True, calls=[{"path": "x"}], arrays=[])
    monkeypatch.setattr(trusted.worker, "start", lambda: SimpleNamespace(request=lambda header, arrays: asked.append(header)))
    monkeypatch.setattr(trusted.worker, "receive", lambda *a, **k: reply)
    args = problem.examples[0].args
    trusted.capture(args)
    trusted.capture(args)
    assert len(asked) == 1  # kept: the second is read back
    monkeypatch.setattr(problem, "methods", lambda: [])  # another list of parts
    trusted.capture(args)
    assert len(asked) == 2 and asked[1]["methods"] == []
