"""The checkout: found from any folder inside it, its problems in the learning order, what learner code may
read in it, and the secret behind the class's inputs."""

from __future__ import annotations

import os

import pytest

from conftest import ROOT
from grader.problem import checkout
from grader.problem.errors import UsageError


@pytest.fixture
def kata(tmp_path):
    """A checkout with two problems (one without an order) and a folder deep inside it."""
    for slug, order in (("second", "order = 2\n"), ("first", "order = 1\n"), ("unordered", "")):
        (tmp_path / "problems" / slug).mkdir(parents=True)
        (tmp_path / "problems" / slug / "problem.toml").write_text(f'title = "{slug}"\n{order}')
    (tmp_path / "solutions").mkdir()
    (tmp_path / "problems" / "first" / "deep" / "er").mkdir(parents=True)
    return tmp_path


def test_the_root_is_found_from_a_subfolder(kata):
    assert checkout.find_root(kata / "problems" / "first" / "deep" / "er") == kata.resolve()
    assert checkout.find_root(kata) == kata.resolve()


def test_outside_any_checkout_the_grader_s_own_is_found(tmp_path):
    assert checkout.find_root(tmp_path) == ROOT


def test_a_handout_is_a_root_but_no_checkout_for_an_instructor_s_command(kata, monkeypatch):
    (kata / "solutions").rmdir()
    (kata / "HANDOUT.md").write_text("a handout\n")
    monkeypatch.chdir(kata / "problems" / "first")
    assert checkout.find_root() == kata.resolve()
    with pytest.raises(UsageError, match="this is a handout: `grade check` needs the full checkout"):
        checkout.find_checkout("`grade check`")


def test_the_problems_come_in_the_learning_order(kata):
    assert checkout.slugs(kata) == ["first", "second", "unordered"]


def test_a_misspelt_problem_is_named_with_its_likely_meaning(kata):
    said = checkout.unknown_problem(kata, "secnd")
    assert "no problem named 'secnd'; did you mean second?" in said and "first, second, unordered" in said
    assert "did you mean" not in checkout.unknown_problem(kata, "zzzzzz")


def test_relative_is_below_the_current_folder_or_the_path_as_given(kata, monkeypatch):
    monkeypatch.chdir(kata)
    assert checkout.relative(kata / "problems" / "first") == os.path.join("problems", "first")
    assert checkout.relative(kata.parent) == str(kata.parent)


def test_the_cache_is_under_the_checkout_unless_the_environment_says_otherwise(kata, monkeypatch, tmp_path):
    monkeypatch.delenv("GRADE_CACHE_DIR", raising=False)
    assert checkout.cache_folder(kata) == kata / ".grade" / "cache"
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert checkout.cache_folder(kata) == tmp_path / "elsewhere"


def test_learner_code_is_kept_from_the_answers_and_sees_its_own_problem(kata, monkeypatch):
    monkeypatch.delenv("GRADE_CACHE_DIR", raising=False)
    (kata / "problems" / "first" / "recorded.npz").write_bytes(b"")
    hidden = checkout.hidden_from_learners(kata)
    assert {str(kata / "solutions"), str(kata / ".git"), str(kata / ".grade" / "cache"),
            str(kata / "problems" / "first" / "recorded.npz")} <= set(hidden)
    graded = kata / "problems" / "first" / "first.py"
    assert checkout.learner_view(kata, "first", graded) == (str(kata / "problems" / "first"),
                                                            str(graded.resolve().parent))


def test_a_link_is_refused_as_the_file_to_grade(kata):
    target = kata / "problems" / "first" / "first.py"
    target.write_text("x = 1\n")
    (kata / "link.py").symlink_to(target)
    assert checkout.graded_file(target) == target.resolve()
    with pytest.raises(UsageError, match="is a symbolic link"):
        checkout.graded_file(kata / "link.py")


def test_the_secret_seed_is_drawn_only_for_a_class_s_gradings(kata, monkeypatch):
    monkeypatch.delenv(checkout.SECRET_VARIABLE, raising=False)
    path = checkout.ensure_secret(kata)
    assert path == kata / "solutions" / "SECRET" and len(path.read_text().strip()) == 64
    assert checkout.ensure_secret(kata).read_text() == path.read_text()  # made once, then kept
    assert not checkout.class_grading() and checkout.secret_seed(kata) is None
    monkeypatch.setenv(checkout.SECRET_VARIABLE, "1")
    seed = checkout.secret_seed(kata)
    assert checkout.class_grading() and isinstance(seed, int) and seed == checkout.secret_seed(kata)
    path.write_text("another secret\n")
    assert checkout.secret_seed(kata) != seed
