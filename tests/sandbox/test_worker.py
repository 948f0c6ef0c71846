"""The worker's handlers (:mod:`grader.sandbox.worker`), in process: loading a module from the source the grader
sends, calling its entry with and without jax.jit, and a mark in the printed output. A batch is
test_worker_batch.py's; the replies' wire form, test_operations.py's."""

from __future__ import annotations

import numpy as np
import pytest

from grader.sandbox import operations, worker

NAMES = {"x": "array:float32", "n": "int"}


@pytest.fixture
def loaded(tmp_path):
    """Load ``source`` as the file ``entry.py`` (never written: the worker reads only what it is sent)."""
    keys = []

    def load(source: str, entry: str = "entry", arg_names=("x", "n")):
        key = f"k{len(keys)}"
        keys.append(key)
        header, arrays = operations.load(key, str(tmp_path / "entry.py"), entry, list(arg_names), source.encode())
        return key, worker.load(header, arrays)[0]

    yield load
    for key in keys:
        worker.STATE.pop(key, None)


def test_a_module_is_compiled_from_the_source_sent_and_its_entry_kept(loaded):
    key, reply = loaded("def entry(x, n):\n    return x * n\n")
    assert reply == {"ok": True} and worker.STATE[key]["fn"](2, 3) == 6


def test_a_module_without_the_entry_says_what_it_defines(loaded):
    _, reply = loaded("def helper(x):\n    return x\n\n\ndef other(x, n):\n    return x\n")
    assert reply["error"]["kind"] == "signature"
    assert reply["error"]["message"] == "entry.py defines no function named 'entry' (it defines: helper, other)"


def test_an_entry_that_cannot_take_the_problem_s_arguments_is_a_signature_error(loaded):
    _, reply = loaded("def entry(x):\n    return x\n")
    assert (reply["error"]["kind"], reply["error"]["line"]) == ("signature", 1)
    assert "cannot be called as entry(x, n)" in reply["error"]["message"]


def test_an_error_while_loading_is_the_import_s(loaded):
    _, reply = loaded("import json\n\nSETTINGS = json.loads('{no')\n")
    assert (reply["error"]["during"], reply["error"]["type"], reply["error"]["line"]) == ("import", "JSONDecodeError", 3)


@pytest.mark.parametrize("jit", [True, False])
def test_a_call_runs_under_jit_where_asked_and_where_it_traces(loaded, jit):
    key, _ = loaded("def entry(x, n):\n    return x * n\n")
    header, arrays = operations.call(key, NAMES, {"x": np.ones(3, np.float32), "n": 2}, jit=jit, max_bytes=4096)
    reply, payloads = worker.call(header, arrays)
    assert reply["jit"] == {"used": jit, "error": None} and reply["result"]["shape"] == [3]
    assert np.frombuffer(payloads[0], np.float32).tolist() == [2.0] * 3


def test_an_entry_that_does_not_trace_falls_back_to_running_eagerly_and_says_why(loaded):
    key, _ = loaded("def entry(x, n):\n    return x * n if float(x.sum()) > 0 else x\n")
    header, arrays = operations.call(key, NAMES, {"x": np.ones(3, np.float32), "n": 2}, jit=True, max_bytes=4096)
    reply, _ = worker.call(header, arrays)
    assert reply["jit"]["used"] is False and reply["jit"]["error"].startswith("ConcretizationTypeError")


def test_a_mark_is_written_after_what_was_printed(capfd):
    print("before")
    assert worker.mark({"text": "[grader mark 1]"}, []) == ({"ok": True}, [])
    assert capfd.readouterr().out == "before\n[grader mark 1]"


def test_a_reply_the_grader_no_longer_reads_ends_the_worker_quietly(monkeypatch, capfd):
    """The grader closed its end (its run ended while a second process was still answering): the worker
    leaves at once, printing nothing the report would show as the learner's output."""
    import os

    left = []
    read_end, write_end = os.pipe()
    os.close(read_end)
    monkeypatch.setattr(worker.os, "_exit", lambda code: left.append(code))
    worker.send(write_end, {"op": "call", "ok": True})
    os.close(write_end)
    assert left == [0]
    assert capfd.readouterr() == ("", "")
    r, w = os.pipe()
    worker.send(w, {"op": "mark", "ok": True})  # an open pipe gets the reply
    os.close(w)
    assert os.read(r, 1 << 16) and left == [0]
    os.close(r)
