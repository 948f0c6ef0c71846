"""The grader's side of a worker (:mod:`grader.sandbox.pool`), in process: its printed output kept within
bounds, what a worker is started with, and how a worker's death is told. Real workers are started in
test_trust.py, test_hostile.py and test_zygote.py."""

from __future__ import annotations

import os

from grader.sandbox import pool
from grader.sandbox.pool import OUTPUT_KEEP, Output, Spec


def test_printed_output_is_kept_whole_up_to_twice_the_bound():
    out = Output()
    for _ in range(4):
        out.add(b"x" * (OUTPUT_KEEP // 2))
    assert out.text() == "x" * 2 * OUTPUT_KEEP


def test_longer_output_keeps_both_ends_and_says_how_much_was_left_out():
    out = Output()
    out.add(b"a" * OUTPUT_KEEP + b"b" * 1000)
    out.add(b"c" * OUTPUT_KEEP)
    head, middle, tail = out.text().split("\n")
    assert head == "a" * OUTPUT_KEEP and tail == "c" * OUTPUT_KEEP
    assert middle == "[... 1000 bytes of output left out ...]"


def test_undecodable_output_is_replaced_not_an_error():
    out = Output()
    out.add(b"ok \xff\xfe")
    assert out.text() == "ok \ufffd\ufffd"


def test_a_worker_is_started_with_the_allow_listed_environment_and_no_current_folder_on_its_path(monkeypatch):
    monkeypatch.setenv("INSTRUCTOR_TOKEN", "secret")
    request = Spec(confine=True, compile_cache="/cache", visible=("/lab",), hidden=("/lab/solutions",)).request()
    assert (request["confine"], request["compile_cache"], request["visible"], request["hidden"]) == (
        True, "/cache", ["/lab"], ["/lab/solutions"])
    assert "INSTRUCTOR_TOKEN" not in request["env"] and request["cwd"] == os.getcwd()
    assert "" not in request["path"] and os.getcwd() not in request["path"]


def test_a_failure_says_its_kind():
    failure = pool.WorkerFailure("timeout", "no answer within 5 s")
    assert (failure.kind, failure.message, str(failure)) == ("timeout", "no answer within 5 s", "no answer within 5 s")
