"""The zygote's record of itself (:mod:`grader.sandbox.zygote_process`), in process: a pid file names a process
only while that process is the one that wrote it; the record's files go with it. The zygote itself, started,
found and stopped, is test_zygote.py's."""

from __future__ import annotations

import os

from grader.sandbox import zygote_process


def test_a_record_names_this_process_only_with_its_start_time(tmp_path):
    (tmp_path / "z.pid").write_text(f"{os.getpid()} {zygote_process.start_time(os.getpid())}")
    assert zygote_process.registered_pid(tmp_path, "z") == os.getpid()
    (tmp_path / "z.pid").write_text(f"{os.getpid()} 1")  # another process that had this pid once
    assert zygote_process.registered_pid(tmp_path, "z") is None


def test_a_missing_or_garbled_record_names_nothing(tmp_path):
    assert zygote_process.registered_pid(tmp_path, "z") is None
    (tmp_path / "z.pid").write_text("not a pid")
    assert zygote_process.registered_pid(tmp_path, "z") is None


def test_listening_writes_the_record_and_discarding_its_own_removes_it_with_the_emptied_folder(tmp_path):
    folder = tmp_path / "checkout"
    folder.mkdir()
    sock = zygote_process.listen(folder, "z")
    try:
        assert zygote_process.registered_pid(folder, "z") == os.getpid()
        assert zygote_process.listen(folder, "z") is None  # a live zygote has it
        zygote_process.discard_own(folder, "z")
    finally:
        sock.close()
    assert not folder.exists()


def test_the_idle_time_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("GRADE_WARM_SECONDS", "5")
    assert zygote_process.idle_seconds() == 5.0
    monkeypatch.setenv("GRADE_WARM_SECONDS", "-1")
    assert zygote_process.idle_seconds() == 0.0
    monkeypatch.setenv("GRADE_WARM_SECONDS", "soon")
    assert zygote_process.idle_seconds() == zygote_process.IDLE_SECONDS
