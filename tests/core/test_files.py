"""grader.core.files: files the grader writes replace the old ones at once."""

import json
import os

import pytest

from grader.core.files import atomic, write_json, write_text


def test_a_file_is_written_whole_and_replaced_whole(tmp_path):
    path = tmp_path / "deep" / "folder" / "f.txt"
    write_text(path, "first")
    write_text(path, "second, longer")
    assert path.read_text() == "second, longer"
    write_json(path, {"a": [1, 2]})
    assert json.loads(path.read_text()) == {"a": [1, 2]}
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.txt"]  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic(path, binary=True) as f:
        f.write(b"half")
        raise RuntimeError("stopped while writing")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


def test_a_link_at_the_name_is_replaced_not_followed(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("not the grader's")
    link = tmp_path / "f.txt"
    link.symlink_to(target)
    write_text(link, "the grader's")
    assert not link.is_symlink() and link.read_text() == "the grader's"
    assert target.read_text() == "not the grader's"


def test_a_written_file_has_the_mode_an_ordinary_file_would(tmp_path):
    path = tmp_path / "f.txt"
    write_text(path, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
