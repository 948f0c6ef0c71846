"""The fingerprint of what a cached output or a kept zygote depends on (:mod:`grader.sandbox.fingerprint`):
the environment that changes numerics changes it, what does not leaves it."""

from __future__ import annotations

import sys

from grader.sandbox import fingerprint


def fresh() -> str:
    fingerprint.fingerprint.cache_clear()
    return fingerprint.fingerprint()


def test_a_numeric_setting_changes_the_fingerprint_and_log_verbosity_does_not(monkeypatch):
    before = fresh()
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    assert fresh() == before
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    assert fresh() != before
    monkeypatch.delenv("JAX_ENABLE_X64")
    assert fresh() == before


def test_installed_distributions_are_read_from_their_folders_names(tmp_path, monkeypatch):
    (tmp_path / "Flax_Extra-1.2.3.dist-info").mkdir()
    (tmp_path / "jax-0.1.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path), str(tmp_path / "missing")])
    assert fingerprint.installed() == {"flax-extra": "1.2.3", "jax": "0.1"}
