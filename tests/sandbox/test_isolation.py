"""What a confined worker sees (:mod:`grader.sandbox.isolation`), computed in process: the folders it may read
and write, and its import path. Confining a worker for real is test_hostile.py's and test_privilege.py's."""

from __future__ import annotations

import os

from grader.sandbox import isolation


def test_a_worker_sees_the_system_the_grader_and_what_it_is_given_nothing_else(tmp_path):
    shown, written, around = tmp_path / "problems", tmp_path / "cache", tmp_path / "solutions"
    for folder in (shown, written, around):
        folder.mkdir()
    kept, _ = isolation.allowed(visible=[str(shown)], writable=[str(written)])
    assert kept[str(shown)] is False and kept[str(written)] is True and str(around) not in kept
    assert kept[os.path.realpath(isolation.PACKAGE)] is False and "/" not in kept


def test_a_folder_inside_a_visible_one_comes_with_it_unless_it_is_written(tmp_path):
    inner = tmp_path / "lab" / "inner"
    inner.mkdir(parents=True)
    kept, _ = isolation.allowed(visible=[str(tmp_path / "lab"), str(inner)])
    assert str(inner) not in kept
    kept, _ = isolation.allowed(visible=[str(tmp_path / "lab")], writable=[str(inner)])
    assert kept[str(inner)] is True


def test_a_folder_reached_through_a_link_is_seen_at_both_paths(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    kept, aliases = isolation.allowed(visible=[str(tmp_path / "link")])
    assert str(real) in kept and aliases[str(tmp_path / "link")] == str(real)


def test_the_import_path_has_no_current_folder_and_no_checkout():
    path = isolation.import_path()
    checkout = os.path.dirname(isolation.PACKAGE)
    assert "" not in path and os.getcwd() not in path and checkout not in path
    assert any(p.endswith("site-packages") for p in path)
