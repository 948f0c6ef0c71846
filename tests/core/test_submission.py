"""grader.core.submission: a class's files are read as untrusted, copied before anything grades them."""

import os

import pytest

from grader.core import submission
from grader.core.submission import Refused, hidden_by_environment, hidden_with, private_copy, read


@pytest.fixture
def klass(tmp_path):
    folder = tmp_path / "class"
    (folder / "ada").mkdir(parents=True)
    (folder / "ada" / "rmsnorm.py").write_text("x = 1\n")
    return folder


def test_a_regular_file_in_the_class_is_read(klass):
    assert read(klass / "ada" / "rmsnorm.py", klass) == b"x = 1\n"


def test_a_file_outside_the_class_is_refused(klass, tmp_path):
    (tmp_path / "other.py").write_text("")
    with pytest.raises(Refused, match="does not lie in"):
        read(tmp_path / "other.py", klass)


def test_a_link_on_the_way_is_refused_the_file_or_a_folder(klass, tmp_path):
    (klass / "link.py").symlink_to(klass / "ada" / "rmsnorm.py")
    with pytest.raises(Refused, match="is a symbolic link"):
        read(klass / "link.py", klass)
    (klass / "bob").symlink_to(klass / "ada")
    with pytest.raises(Refused, match=r"bob is a symbolic link"):
        read(klass / "bob" / "rmsnorm.py", klass)


def test_a_hard_link_a_folder_and_a_missing_file_are_refused(klass):
    os.link(klass / "ada" / "rmsnorm.py", klass / "twin.py")
    with pytest.raises(Refused, match="hard link"):
        read(klass / "twin.py", klass)
    with pytest.raises(Refused, match="not a regular file"):
        read(klass / "ada", klass)
    with pytest.raises(Refused, match="cannot be read"):
        read(klass / "ada" / "missing.py", klass)


def test_a_file_too_large_is_refused_unread(klass, monkeypatch):
    monkeypatch.setattr(submission, "MAX_BYTES", 4)
    with pytest.raises(Refused, match="has 6 bytes, more than the 4"):
        read(klass / "ada" / "rmsnorm.py", klass)


def test_a_private_copy_is_the_bytes_read_in_a_new_folder_only_its_owner_reads(klass, tmp_path):
    copy = private_copy(klass / "ada" / "rmsnorm.py", klass, tmp_path / "graded", "rmsnorm.py")
    assert copy == tmp_path / "graded" / "rmsnorm.py" and copy.read_bytes() == b"x = 1\n"
    assert copy.stat().st_mode & 0o777 == 0o600 and copy.parent.stat().st_mode & 0o777 == 0o700
    with pytest.raises(FileExistsError):  # the folder is made here: one left in the way is not used
        private_copy(klass / "ada" / "rmsnorm.py", klass, tmp_path / "graded", "again.py")


def test_paths_hidden_add_up_through_the_environment(monkeypatch, tmp_path):
    env = hidden_with({"HOME": "/h"}, [tmp_path / "class"])
    env = hidden_with(env, [tmp_path / "gradebook.csv"])
    assert env["HOME"] == "/h"
    monkeypatch.setenv(submission.HIDE_VARIABLE, env[submission.HIDE_VARIABLE] + os.pathsep + "relative/ignored")
    assert hidden_by_environment() == [str(tmp_path / "class"), str(tmp_path / "gradebook.csv")]


def test_a_name_of_any_bytes_is_shown():
    assert submission.shown(os.fsdecode(b"caf\xe9.py")) == "caf\\xe9.py"
