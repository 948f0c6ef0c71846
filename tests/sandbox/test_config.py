"""Every worker's environment (:func:`grader.sandbox.config.worker_env`): the grader's, allow-listed, with the
compile flags added once."""

from __future__ import annotations

from grader.sandbox import config


def test_only_what_the_numeric_libraries_and_the_sandbox_read_is_kept(monkeypatch):
    monkeypatch.setenv("INSTRUCTOR_TOKEN", "secret")
    monkeypatch.setenv("GRADE_CLASS_FOLDER", "/class")
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = config.worker_env()
    assert "INSTRUCTOR_TOKEN" not in env and "GRADE_CLASS_FOLDER" not in env
    assert env["JAX_ENABLE_X64"] == "1" and env["LC_ALL"] == "C.UTF-8" and env["PYTHONUNBUFFERED"] == "1"


def test_the_compile_flags_are_added_to_the_learner_s_own_once(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    assert config.worker_env()["XLA_FLAGS"] == f"--xla_dump_to=/tmp/x {config.COMPILE_FLAGS}"
    monkeypatch.setenv("XLA_FLAGS", config.COMPILE_FLAGS)
    assert config.worker_env()["XLA_FLAGS"] == config.COMPILE_FLAGS
