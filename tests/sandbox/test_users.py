"""The unprivileged user learner code runs as where root grades unconfined (:mod:`grader.sandbox.users`), in
process: which user it is (never root), what it may keep in the folders any user may write in, and what is
withheld from it. Becoming that user, and removing what it left, need root: test_privilege.py."""

from __future__ import annotations

import os
import stat

import pytest

from grader.sandbox import isolation, users


@pytest.fixture
def as_root(monkeypatch):
    monkeypatch.setattr(users.os, "geteuid", lambda: 0)


def test_a_worker_gets_a_user_of_its_own_where_the_ids_exist(as_root, monkeypatch):
    monkeypatch.setattr(users, "_mapped", lambda kind, number, count=1: True)
    first, count = users.LEARNER_UIDS
    assert users.learner_user({}, 5) == (first + 5, first + 5)
    assert users.learner_user({}, count + 7) == (first + 7, first + 7)  # (pids wrap around the range)
    assert users.own_learner_ids()


def test_else_the_named_user_and_never_root(as_root, monkeypatch):
    monkeypatch.setattr(users, "_mapped", lambda kind, number, count=1: count == 1)  # no range of ids of its own
    import pwd

    nobody = pwd.getpwnam("nobody")
    assert users.learner_user({}, 5) == (nobody.pw_uid, nobody.pw_gid)
    assert users.learner_user({users.LEARNER_USER: "root"}, 5) is None
    assert users.learner_user({users.LEARNER_USER: "no-such-user-here"}, 5) is None
    assert not users.own_learner_ids()


def test_root_with_no_user_to_run_learner_code_as_refuses_to_run_it(as_root, monkeypatch):
    monkeypatch.setattr(users, "_mapped", lambda kind, number, count=1: False)
    with pytest.raises(isolation.Refused) as info:
        users.confined_ids({})
    assert users.LEARNER_USER in info.value.strerror


def test_a_user_that_is_not_root_runs_learner_code_as_itself(monkeypatch):
    monkeypatch.setattr(users.os, "geteuid", lambda: 1000)
    assert users.learner_user({}, 5) is None and users.confined_ids({}) is None


def test_what_a_user_keeps_in_temporary_folders_is_counted_against_the_limit(tmp_path, monkeypatch):
    shared = tmp_path / "tmp"
    (shared / "anyone").mkdir(parents=True)
    (shared / "anyone").chmod(0o777)  # a folder any user may write in: what it holds of the user's counts too
    (shared / "own").mkdir()  # a folder of the user's: everything in it
    for path in (shared / "a", shared / "anyone" / "b", shared / "own" / "c"):
        path.write_bytes(os.urandom(64 << 10))
    monkeypatch.setattr(users, "TEMPORARY", (str(shared),))
    monkeypatch.setattr(users, "TEMPORARY_LIMIT", 3 * (64 << 10))
    assert users.over_temporary_limit(os.getuid()) is None
    (shared / "own" / "d").write_bytes(os.urandom(64 << 10))
    assert "the limit on temporary files" in users.over_temporary_limit(os.getuid())
    assert users.over_temporary_limit(os.getuid() + 1) is None  # another user's files are not its


def test_withholding_takes_other_users_access_away_and_leaves_links(tmp_path):
    secret, link = tmp_path / "solutions", tmp_path / "link"
    secret.mkdir(mode=0o755)
    secret.chmod(0o775)
    link.symlink_to(secret)
    users.withhold([secret, link, tmp_path / "gone"])
    assert stat.S_IMODE(secret.stat().st_mode) == 0o770
