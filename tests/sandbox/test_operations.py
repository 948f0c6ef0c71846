"""The table of worker operations, in-process: each request builder's message read back as the worker reads it
(arguments decoded as the worker decodes them), every operation asked has its handler in the worker, and
what the worker's handlers write parses as the reply type the table gives their operation.

Forged replies, and the bounds on reading one, are test_protocol.py's.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest

from grader.core import kinds
from grader.sandbox import operations, protocol, worker
from grader.sandbox.operations import OPERATIONS, Ready, Recorded, Reply, Result, Returned, Tree

NAMES = {"x": "array:float32", "n": "int"}
ARGS = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "n": 3}


def sent(request: operations.Request) -> tuple[dict, list]:
    """``request`` as the worker reads it: written as :class:`grader.sandbox.pool.Worker` writes it."""
    specs, payloads = protocol.pack_arrays(list(request.arrays))
    with tempfile.TemporaryFile(buffering=0) as f:
        protocol.write_message(f.fileno(), dict(request.header, arrays=specs), payloads)
        f.seek(0)
        return protocol.read_message(f.fileno(), protocol.MAX_REQUEST_HEADER, max_payload=1 << 30)


def decoded(header: dict, arrays: list) -> dict:
    values, _ = kinds.decode(header["args"], arrays)
    return dict(zip(NAMES, values))


def same_args(got: dict, want: dict) -> bool:
    return got.keys() == want.keys() and all(np.array_equal(got[k], want[k]) for k in want)


# -- requests ---------------------------------------------------------------------------------------------


def test_a_call_carries_its_arguments_bound_jit_and_moved_parameters():
    moved = kinds.with_moved(ARGS, ("params/w",))
    header, arrays = sent(operations.call("graded", NAMES, moved, jit=True, max_bytes=4096))
    assert (header["op"], header["key"], header["jit"], header["max_bytes"]) == ("call", "graded", True, 4096)
    assert header["moved"] == ["params/w"] and same_args(decoded(header, arrays), ARGS)


def test_a_batch_carries_each_call_with_its_own_bound_and_all_their_arrays():
    cases = [(ARGS, 100), ({"x": np.ones(2, np.float32), "n": 1}, 200)]
    header, arrays = sent(operations.batch("graded", NAMES, cases, jit=False))
    assert header["op"] == "batch" and [c["max_bytes"] for c in header["calls"]] == [100, 200]
    for call, (args, _) in zip(header["calls"], cases):
        assert same_args(decoded(call, arrays), args) and call["moved"] is False


def test_a_load_carries_the_source_as_bytes():
    source = "def f(x, n):\n    return x * n\n".encode()
    header, arrays = sent(operations.load("graded", "/lab/f.py", "f", ["x", "n"], source, 512, moves=True))
    assert {k: header[k] for k in ("op", "path", "entry", "arg_names", "memory_mib", "moves")} == {
        "op": "load", "path": "/lab/f.py", "entry": "f", "arg_names": ["x", "n"], "memory_mib": 512, "moves": True}
    assert arrays[0].tobytes() == source


def test_a_substitution_sends_the_values_last_in_the_order_of_its_paths():
    values = {"params/b": np.zeros(2, np.float32), "params/a": np.ones(3, np.float32)}
    header, arrays = sent(operations.substitute("reference", NAMES, ARGS, values, max_bytes=64))
    assert header["paths"] == ["params/a", "params/b"] and header["max_bytes"] == 64
    assert same_args(decoded(header, arrays), ARGS)
    assert [a.tolist() for a in arrays[-2:]] == [[1.0] * 3, [0.0] * 2]


def test_parameters_and_a_capture_say_what_they_ask():
    header, _ = sent(operations.params("graded", NAMES, ARGS, values=True))
    assert (header["op"], header["values"]) == ("params", True)
    header, arrays = sent(operations.capture("reference", NAMES, ARGS, ["Dense"], [["Block", "mix"]], ["helper"]))
    assert (header["classes"], header["methods"], header["functions"]) == (["Dense"], [["Block", "mix"]], ["helper"])
    assert same_args(decoded(header, arrays), ARGS)


def test_a_part_carries_the_recorded_call_and_only_the_arrays_given():
    call = {"cls": "Block", "method": "mix", "fields": {"width": 4}}
    header, arrays = sent(operations.part("graded", call, [{"array": 0}], {"mask": {"value": None}},
                                          {"params/w": {"array": 1}}, [np.ones(2), np.zeros(3)], max_bytes=99))
    assert {k: header[k] for k in ("cls", "method", "function", "fields", "max_bytes")} == {
        "cls": "Block", "method": "mix", "function": False, "fields": {"width": 4}, "max_bytes": 99}
    assert [a.shape for a in arrays] == [(2,), (3,)]


def test_every_builder_names_its_operation():
    requests = {"mark": operations.mark("x"), "cancel": operations.cancel(), "quit": operations.quit(),
                "params": operations.params("k", NAMES, ARGS), "call": operations.call("k", NAMES, ARGS, True, 1)}
    for name, request in requests.items():
        assert request.header["op"] == name and OPERATIONS[name].build.__name__ == name


# -- the table and the worker's handlers -------------------------------------------------------------------


def test_every_operation_asked_has_a_handler_in_the_worker_and_only_those():
    asked = {name for name, op in OPERATIONS.items() if op.build is not None}
    assert set(worker.HANDLERS) == asked and "ready" not in asked


def test_only_a_batch_answers_several_times_and_only_quit_never():
    assert [name for name, op in OPERATIONS.items() if op.several] == ["batch"]
    assert [name for name, op in OPERATIONS.items() if op.reply is None] == ["quit"]


@pytest.fixture
def entry():
    worker.STATE["graded"] = {"fn": lambda x, n: x * n, "path": "graded.py", "module": None, "jitted": {},
                              "jit_error": None, "moves": False, "costs": {}}
    yield
    del worker.STATE["graded"]


def answered(op: str, reply: dict, payloads: list, max_payload: int = 1 << 20) -> Reply:
    """What the worker writes for ``op``'s handler's ``reply``, read back as the grader reads it."""
    data = {"op": op, **reply}
    with tempfile.TemporaryFile(buffering=0) as f:
        protocol.write_message(f.fileno(), data, payloads)
        f.seek(0)
        return operations.parse_reply(*protocol.read_message(f.fileno(), max_payload=max_payload), op)


def test_a_call_answered_by_the_worker_parses_as_what_it_returned(entry):
    request = operations.call("graded", NAMES, ARGS, jit=False, max_bytes=4096)
    got = answered("call", *worker.HANDLERS["call"](*sent(request)))
    assert isinstance(got, Returned) and got.ok and got.jit_used is False
    assert got.result.shape == (2, 3) and np.array_equal(got.result.array, ARGS["x"] * 3)


def test_a_result_over_its_bound_is_described_not_sent(entry):
    request = operations.call("graded", NAMES, ARGS, jit=False, max_bytes=8)
    got = operations.check_bound(answered("call", *worker.HANDLERS["call"](*sent(request))), 8)
    assert got.result == Result("array", "float32", (2, 3), None)


def test_an_error_in_the_call_is_an_error_reply_of_its_operation(entry):
    def refuses(x, n):
        raise ValueError(f"no {n}")

    worker.STATE["graded"]["fn"] = refuses
    got = answered("call", *worker.HANDLERS["call"](*sent(operations.call("graded", NAMES, ARGS, False, 4096))))
    assert type(got) is Returned and not got.ok
    assert (got.error["kind"], got.error["type"], got.error["message"]) == ("exception", "ValueError", "no 3")


def test_a_mark_and_a_late_cancel_answer_with_nothing_else():
    assert answered("mark", *worker.HANDLERS["mark"]({"text": ""}, [])) == Reply("mark")
    assert answered("cancel", *worker.HANDLERS["cancel"]({}, [])) == Reply("cancel")


def test_each_reply_type_is_the_table_s():
    assert operations.parse_reply({"op": "ready", "ok": True, "backend": "cpu"}, [], "ready") == Ready("ready",
                                                                                                       backend="cpu")
    assert operations.parse_reply({"op": "params", "ok": True, "params": None}, [], "params") == Tree("params")
    assert operations.parse_reply({"op": "capture", "ok": True, "calls": []}, [], "capture") == Recorded(
        "capture", calls=[], arrays=[])
