"""The monitor's watch over its worker (:func:`grader.sandbox.monitor._watch`), in process, over a child that
sleeps: it ends the child when the grader says ``kill``, when the grader goes away, or when a limit says
why (and tells the grader why), and it says the child's exit status. Confining a worker, and becoming an
unprivileged user, are test_privilege.py's and test_hostile.py's."""

from __future__ import annotations

import signal
import socket
import subprocess

import pytest

from grader.sandbox import monitor

pytestmark = pytest.mark.grading  # each test starts a process (a child that sleeps, not a worker)


@pytest.fixture
def child():
    proc = subprocess.Popen(["sleep", "60"])
    yield proc.pid
    proc.returncode = 0  # collected by the watch; nothing left for Popen to wait for
    if proc.poll() is None:
        proc.kill()


@pytest.fixture
def status():
    grader, monitor_end = socket.socketpair()
    yield grader, monitor_end
    grader.close()
    monitor_end.close()


def test_the_grader_s_kill_ends_the_worker(child, status):
    grader, theirs = status
    grader.send(b"kill\n")
    assert monitor._watch(child, theirs) == -signal.SIGKILL


def test_the_grader_going_away_ends_the_worker(child, status):
    grader, theirs = status
    grader.close()
    assert monitor._watch(child, theirs) == -signal.SIGKILL


def test_a_limit_ends_the_worker_and_the_grader_is_told_why(child, status, monkeypatch):
    grader, theirs = status
    monkeypatch.setattr(monitor, "WATCH_SECONDS", 0.05)
    checks = iter([None, None, "it kept too much"])
    assert monitor._watch(child, theirs, lambda: next(checks)) == -signal.SIGKILL
    assert grader.recv(64) == b"limit it kept too much\n"


def test_a_worker_that_ends_by_itself_is_said_with_its_status(status):
    _, theirs = status
    proc = subprocess.Popen(["sh", "-c", "exit 7"])
    assert monitor._watch(proc.pid, theirs) == 7
    proc.returncode = 7
