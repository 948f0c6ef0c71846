"""Every reply a worker sends is untrusted input: the wire format's bounds and the reply schema, checked
in-process, one message at a time (no worker runs).

A message is read from a file descriptor as the grader reads a worker's pipe: :func:`read_message` then
:func:`grader.sandbox.operations.parse_reply`, then :func:`~grader.sandbox.operations.check_bound` with the request's bound (which the grader alone knows: an
array said to be omitted must be over it). A forged reply is a :class:`ProtocolError`, never another
exception and never a reply;
a message cut short is an ``EOFError`` (the worker died: :class:`grader.sandbox.pool.Worker` says how). A message
whose announced sizes are over a bound is refused before the bytes are read: the forgeries that announce
too much send nothing after the announcement, so a reader that went on to read would get ``EOFError``.

One forgery also goes the whole way, from learner code through a real worker's pipe to the report, in
tests/sandbox/test_trust.py; those that parse and lie, in tests/grading/test_forged_reports.py.
"""

from __future__ import annotations

import json
import struct
import tempfile

import numpy as np
import pytest

from grader.sandbox import operations, protocol
from grader.sandbox.operations import OPERATIONS, Ready, Recorded, Reply, Result, Returned, Tree
from grader.sandbox.protocol import DECODABLE, MAX_ARRAYS, MAX_DIMS, MAX_REPLY_HEADER, MAX_TEXT, ProtocolError

BOUND = 1 << 16  # the caller's bound on a reply's array bytes (the engine ties it to the expected output's size)
JIT = {"used": True, "error": None}
ERROR = {"kind": "exception", "type": "ValueError", "message": "boom", "file": "/lab/f.py", "line": 3,
         "during": "call", "traceback": "Traceback ..."}


def message(header: dict | bytes, payload: bytes = b"") -> bytes:
    """A message as it travels: the header's length, the header (JSON, unless given as bytes), the arrays' bytes."""
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack(">I", len(head)) + head + payload


def spec(dtype: str = "float32", shape: tuple = (4,), nbytes: int | None = None) -> dict:
    if nbytes is None:
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return {"dtype": dtype, "shape": list(shape), "nbytes": nbytes}


def result(res: dict, arrays: list[dict] = (), **fields) -> dict:
    """A result reply's header."""
    return {"op": "call", "ok": True, "seconds": 0.5, "jit": JIT, "result": res, "arrays": list(arrays), **fields}


def array_result(dtype: str = "float32", shape: tuple = (4,), arrays: list[dict] | None = None, **fields) -> dict:
    return result({"type": "array", "dtype": dtype, "shape": list(shape)},
                  [spec(dtype, shape)] if arrays is None else arrays, **fields)


def calls(*arrays: dict) -> dict:
    """A reply of recorded module calls (none) with ``arrays``: a well-formed carrier for array descriptions."""
    return {"op": "capture", "ok": True, "calls": [], "arrays": list(arrays)}


def error(op: str = "call", **fields) -> dict:
    return {"op": op, "ok": False, "error": {**ERROR, **fields}}


def read(data: bytes, max_payload: int = BOUND):
    """read_message on a descriptor that holds ``data`` and then ends, as a pipe whose writer closed."""
    with tempfile.TemporaryFile(buffering=0) as f:
        f.write(data)
        f.seek(0)
        return protocol.read_message(f.fileno(), max_payload=max_payload)


def reply(data: bytes, expect: str | tuple[str, ...] = "call", max_payload: int = BOUND) -> Reply:
    """The reply ``data`` holds, read as the grader reads the answer to a request whose bound is ``max_payload``."""
    return operations.check_bound(operations.parse_reply(*read(data, max_payload), expect), max_payload)


# -- forgeries ----------------------------------------------------------------------------------------------

# name -> (the message on the wire, the kind of reply that was due). Each must be a ProtocolError.
FORGERIES = {
    # Those a worker sends end to end in test_trust.py (there, as learner code writing to the worker's pipe).
    "a result without its keys": (message({"op": "call", "ok": True}), "call"),
    "an unknown kind of reply": (message({"op": "ready", "backend": "cpu"}), "call"),
    "two gigabytes announced": (message(array_result(shape=(1 << 29,))), "call"),
    "an overflowing shape": (message(result({"type": "array", "dtype": "float32", "shape": [1 << 62, 1 << 62],
                                             "omitted": True})), "call"),
    "bytes that do not make the shape": (message(array_result(arrays=[spec(nbytes=3)]), b"\0" * 3), "call"),
    "an error of no known kind": (message(error(kind="pass")), "call"),
    "a header that is not JSON": (message(b"{not json"), "call"),
    "a header of a gigabyte": (struct.pack(">I", 1 << 30), "call"),

    # The header.
    "a header one byte over its bound": (struct.pack(">I", MAX_REPLY_HEADER + 1), "call"),
    "a header that is not UTF-8": (message(b'{"op": "capture", "ok": true, "calls": [], "x": "\xff"}'), "capture"),
    "an empty header": (message(b""), "call"),
    "a header that is a list": (message(b"[]"), "call"),
    "a header that is null": (message(b"null"), "call"),
    "a header nested past the recursion limit": (message(b"[" * 100_000 + b"]" * 100_000), "call"),

    # The arrays' descriptions.
    "arrays that are not a list": (message({**calls(), "arrays": {}}), "capture"),
    "one array more than the most": (message(calls(*[spec(shape=(0,))] * (MAX_ARRAYS + 1))), "capture"),
    "an array description that is a string": (message(array_result(arrays=["float32"])), "call"),
    "an array description without its byte count": (message(array_result(arrays=[{"dtype": "float32",
                                                                                   "shape": [4]}])), "call"),
    "a shape that is a number": (message(array_result(arrays=[{"dtype": "float32", "shape": 4, "nbytes": 16}])),
                                 "call"),
    "a shape that is null": (message(array_result(arrays=[{"dtype": "float32", "shape": None, "nbytes": 16}])),
                             "call"),
    "a dtype that is not a string": (message(array_result(arrays=[{"dtype": 4, "shape": [4], "nbytes": 16}])),
                                     "call"),
    "a negative byte count": (message(array_result("bfloat16", arrays=[spec("bfloat16", nbytes=-16)])), "call"),
    "a byte count that is true": (message(array_result("uint8", (1,), arrays=[spec("uint8", (1,), True)]), b"\0"),
                                  "call"),
    "a fractional byte count": (message(array_result(arrays=[spec(nbytes=16.0)]), b"\0" * 16), "call"),
    "a negative dimension": (message(calls(spec("bfloat16", (-1,), 0))), "capture"),
    "a dimension that is true": (message(array_result(arrays=[spec(shape=(True,), nbytes=4)]), b"\0" * 4),
                                 "call"),
    "a dimension of 2**40": (message(calls(spec(shape=(1 << 40, 0)))), "capture"),
    "an array of 33 dimensions": (message(array_result(shape=(1,) * (MAX_DIMS + 1))), "call"),
    "a byte count of another dtype": (message(array_result("float64", arrays=[spec("float64", nbytes=16)]),
                                              b"\0" * 16), "call"),
    "an array one element over the bound": (message(array_result("uint8", (BOUND + 1,))), "call"),
    "arrays together over the bound": (message(calls(*[spec("uint8", (BOUND // 2 + 1,))] * 2)), "capture"),
    "an undecodable array over the bound": (message(calls(spec("bfloat16", (1,), BOUND + 1))), "capture"),

    # The reply's kind.
    "a cancel reply where a result is due": (message({"op": "cancel", "ok": True}), "call"),
    "a mark where a result is due": (message({"op": "mark", "ok": True}), "call"),
    "a batch's result where a call's is due": (message({**result({"type": "NoneType"}), "op": "batch"}), "call"),
    "a call's result where a part's is due": (message(result({"type": "NoneType"})), "part"),
    "a result without its operation": (message({k: v for k, v in result({"type": "NoneType"}).items() if k != "op"}),
                                       "call"),
    "an operation that is not a string": (message({**result({"type": "NoneType"}), "op": ["call"]}), "call"),
    "a result where the ready reply is due": (message(array_result(arrays=[])), "ready"),
    "a ready reply with a result's fields": (message({**array_result(arrays=[]), "op": "ready"}), "ready"),
    "an error where the ready reply is due": (message(error("ready")), "ready"),
    "a ready reply without its backend": (message({"op": "ready", "ok": True}), "ready"),
    "a ready reply without ok": (message({"op": "ready", "backend": "cpu"}), "ready"),
    "a result where a mark is due": (message(result({"type": "NoneType"})), "mark"),
    "ok that is 1": (message({**result({"type": "NoneType"}), "ok": 1}), "call"),

    # An error reply.
    "an error that is not an object": (message({"op": "call", "ok": False, "error": "boom"}), "call"),
    "an error whose line is text": (message(error(line="3")), "call"),
    "an error whose line is true": (message(error(line=True)), "call"),
    "an error without its message": (message({"op": "call", "ok": False, "error": {k: v for k, v in ERROR.items()
                                                                      if k != "message"}}), "call"),
    "an error whose type is a number": (message(error(type=3)), "call"),
    "an error whose phase is null": (message(error("load", during=None)), "load"),

    # A result.
    "a result without its seconds": (message({k: v for k, v in array_result().items() if k != "seconds"},
                                             b"\0" * 16), "call"),
    "seconds that are true": (message(array_result(seconds=True), b"\0" * 16), "call"),
    "seconds that are text": (message(array_result(seconds="0.5"), b"\0" * 16), "call"),
    "a jit report that is not an object": (message(array_result(jit=True), b"\0" * 16), "call"),
    "a jit report without used": (message(array_result(jit={"error": None}), b"\0" * 16), "call"),
    "a jit error that is not text": (message(array_result(jit={"used": False, "error": 3}), b"\0" * 16), "call"),
    "a result that is a list": (message(result([])), "call"),
    "a result of no type": (message(result({})), "call"),
    "a result whose type is a number": (message(result({"type": 3}, op="batch")), ("batch", "cancel")),
    "an array result without its dtype": (message(result({"type": "array", "shape": [4]},
                                                         [spec("bfloat16", nbytes=8)]), b"\0" * 8), "call"),
    "an array result whose shape is text": (message(result({"type": "array", "dtype": "float32", "shape": "4"},
                                                           [spec()]), b"\0" * 16), "call"),
    "an array result of 33 dimensions": (message(result({"type": "array", "dtype": "float32", "omitted": True,
                                                         "shape": [1] * (MAX_DIMS + 1)})), "call"),
    "an array result whose bytes are another dtype": (message(result({"type": "array", "dtype": "float32",
                                                                      "shape": [4]}, [spec("int32")]), b"\0" * 16),
                                                      "call"),
    "an array result whose bytes are another shape": (message(result({"type": "array", "dtype": "float32",
                                                                      "shape": [4]}, [spec(shape=(2, 2))]),
                                                              b"\0" * 16), "call"),
    "an array result with two arrays": (message(array_result(arrays=[spec(), spec()]), b"\0" * 32), "call"),
    "an array result without its bytes": (message(array_result(arrays=[])), "call"),
    "an omitted array result with bytes": (message(result({"type": "array", "dtype": "float32", "shape": [4],
                                                           "omitted": True}, [spec()]), b"\0" * 16), "call"),
    "a result that is no array, with bytes": (message(result({"type": "list"}, [spec()]), b"\0" * 16), "call"),
    "seconds that are not a number": (message(array_result(seconds=float("nan")), b"\0" * 16), "call"),
    "seconds that are infinite": (message(array_result(seconds=float("inf")), b"\0" * 16), "call"),
    # Bytes of a dtype the grader does not decode come back as None: the result must still name their dtype
    # and shape, or a result that names a decodable one would reach the comparison without its array.
    "a float32 result over bytes of bfloat16": (message(result({"type": "array", "dtype": "float32", "shape": [4]},
                                                               [spec("bfloat16", (4,), 8)]), b"\0" * 8), "call"),
    "a bfloat16 result over bytes of another shape": (message(result({"type": "array", "dtype": "bfloat16",
                                                                      "shape": [4]}, [spec("bfloat16", (2,), 4)]),
                                                              b"\0" * 4), "call"),

    # Against the request's bound: a worker sends every array that fits it, and omits only larger ones.
    "an omitted array result small enough to send": (message(result({"type": "array", "dtype": "float32",
                                                                     "shape": [4], "omitted": True})), "call"),
    "an omitted array result of exactly the bound": (message(result({"type": "array", "dtype": "uint8",
                                                                     "shape": [BOUND], "omitted": True})), "call"),
    "an omitted empty array result": (message(result({"type": "array", "dtype": "complex128", "shape": [0, 3],
                                                      "omitted": True})), "call"),
    "an omitted result where a batch's answer is due": (message(result({"type": "array", "dtype": "int64",
                                                                        "shape": [2, 2], "omitted": True},
                                                                       op="batch")), ("batch", "cancel")),

    # Parameters.
    "a parameter tree that is a list": (message({"op": "params", "ok": True, "params": [["a", [2]]]}), "params"),
    "a parameter shape with a negative": (message({"op": "params", "ok": True, "params": {"a": [-2]}}), "params"),
    "a parameter shape that is text": (message({"op": "params", "ok": True, "params": {"a": "2"}}), "params"),
    "parameter values without a tree": (message({"op": "params", "ok": True, "params": None, "paths": ["a"],
                                                 "arrays": [spec(shape=(2,))]}, b"\0" * 8), "params"),
    "parameter values for other paths": (message({"op": "params", "ok": True, "params": {"a": [2]}, "paths": ["b"],
                                                  "arrays": [spec(shape=(2,))]}, b"\0" * 8), "params"),
    "fewer parameter values than paths": (message({"op": "params", "ok": True, "params": {"a": [2], "b": [2]}, "paths": ["a", "b"],
                                                   "arrays": [spec(shape=(2,))]}, b"\0" * 8), "params"),
    "a parameter value of another shape": (message({"op": "params", "ok": True, "params": {"a": [2]}, "paths": ["a"],
                                                    "arrays": [spec(shape=(3,))]}, b"\0" * 12), "params"),
    "a parameter value of an undecodable dtype": (message({"op": "params", "ok": True, "params": {"a": [2]}, "paths": ["a"],
                                                           "arrays": [spec("bfloat16", (2,), 4)]}, b"\0" * 4),
                                                  "params"),
    "parameter paths that are text": (message({"op": "params", "ok": True, "params": {"a": [2]}, "paths": "a",
                                               "arrays": [spec(shape=(2,))]}, b"\0" * 8), "params"),
    "array bytes with a parameter tree": (message({"op": "params", "ok": True, "params": {"a": [2]}, "arrays": [spec(shape=(2,))]},
                                                  b"\0" * 8), "params"),

    # Recorded module calls.
    "no list of calls": (message({"op": "capture", "ok": True}), "capture"),
    "calls that are not a list": (message({"op": "capture", "ok": True, "calls": {"module": "Dense"}}), "capture"),
    "calls that are not objects": (message({"op": "capture", "ok": True, "calls": ["Dense"]}), "capture"),
}

# Forgeries that get another exception than ProtocolError out of the protocol functions: bugs, each
# said in its reason. An exception the engine does not expect (pool.Worker turns only ProtocolError and
# EOFError into a WorkerFailure) ends the whole run with a traceback, not a verdict. Strict: once fixed,
# these pass, fail as XPASS, and move into FORGERIES.
# Two forgeries that once escaped as other exceptions (ValueError from a reshape, TypeError from a sort),
# which nothing between the worker and the command line caught.
FORGERIES.update({
    "a zero-size array of an overflowing shape": (message(array_result(shape=(1 << 31, 1 << 31, 0))), "call"),
    "parameter paths of mixed types": (
        message({"op": "params", "ok": True, "params": {"a": [2]}, "paths": [1, "a"], "arrays": [spec(shape=(2,))] * 2},
                b"\0" * 16), "params"),
})


@pytest.mark.parametrize("name", FORGERIES)
def test_a_forged_reply_is_a_protocol_error(name):
    data, expect = FORGERIES[name]
    with pytest.raises(ProtocolError):
        reply(data, expect)


# -- the bounds, at their edges ---------------------------------------------------------------------------


def padded(header: dict, size: int) -> bytes:
    """``header`` as JSON of exactly ``size`` bytes (padded with a string field)."""
    base = json.dumps({**header, "pad": ""}).encode()
    return json.dumps({**header, "pad": "x" * (size - len(base))}).encode()


def test_a_header_of_exactly_the_bound_is_read():
    head = padded({"op": "capture", "ok": True, "calls": []}, MAX_REPLY_HEADER)
    assert len(head) == MAX_REPLY_HEADER
    assert reply(message(head), "capture").calls == []


def test_arrays_of_exactly_the_caller_s_bound_are_read_and_one_byte_more_is_not():
    header = calls(*[spec("uint8", (BOUND // 2,))] * 2)
    got = reply(message(header, b"\1" * BOUND), "capture")
    assert [a.tolist() for a in got.arrays] == [[1] * (BOUND // 2)] * 2
    with pytest.raises(ProtocolError):
        reply(message(header, b"\1" * BOUND), "capture", max_payload=BOUND - 1)


def test_the_most_arrays_and_dimensions_are_read():
    header = calls(*[spec("uint8", (1,) * MAX_DIMS)] * MAX_ARRAYS)
    got = reply(message(header, b"\7" * MAX_ARRAYS), "capture")
    assert len(got.arrays) == MAX_ARRAYS and got.arrays[-1].shape == (1,) * MAX_DIMS and got.arrays[-1].item() == 7


def test_a_result_too_large_to_send_keeps_its_shape_up_to_the_largest_dimension():
    shape = ((1 << 40) - 1, 2)
    got = reply(message(result({"type": "array", "dtype": "float32", "shape": list(shape), "omitted": True})))
    assert got.result == Result("array", "float32", shape, None)


def test_an_omitted_array_result_one_byte_over_the_bound_is_read():
    got = reply(message(result({"type": "array", "dtype": "uint8", "shape": [BOUND + 1], "omitted": True})))
    assert got.result == Result("array", "uint8", (BOUND + 1,), None)


def test_an_array_result_over_the_bound_of_its_own_request_is_refused_after_it_is_read():
    """A batch's answers are read under the largest of their bounds; each is checked against its own."""
    data = written(array_result("uint8", (64,)), [np.ones(64, np.uint8)])
    assert reply(data, max_payload=64).result.array.tolist() == [1] * 64
    with pytest.raises(ProtocolError):
        operations.check_bound(reply(data, max_payload=64), 63)


def test_a_zero_size_array_of_a_large_shape_is_read():
    got = reply(message(array_result(shape=(1 << 20, 1 << 20, 0))))
    assert got.result.array.shape == (1 << 20, 1 << 20, 0)


@pytest.mark.parametrize("field", ["type", "message", "file", "during", "traceback"])
def test_an_error_s_text_is_cut_to_the_most_characters_kept(field):
    whole = reply(message(error(**{field: "é" * MAX_TEXT})))
    assert whole.error[field] == "é" * MAX_TEXT
    cut = reply(message(error(**{field: "é" * MAX_TEXT + "tail"})))
    assert cut.error[field] == "é" * (MAX_TEXT - len(" [...]")) + " [...]"
    assert {k: v for k, v in cut.error.items() if k != field} == {k: v for k, v in whole.error.items() if k != field}


def test_the_other_texts_a_worker_sends_are_cut_too():
    long = "x" * (MAX_TEXT + 1)
    cut = "x" * (MAX_TEXT - len(" [...]")) + " [...]"
    assert reply(message({"op": "ready", "ok": True, "backend": long}), "ready").backend == cut
    assert reply(message(result({"type": long, "dtype": long}))).result == Result(cut, cut)
    assert reply(message(array_result(jit={"used": False, "error": long}), b"\0" * 16)).jit_error == cut


# -- well-formed replies -------------------------------------------------------------------------------


def written(header: dict, arrays: list[np.ndarray] = ()) -> bytes:
    """A message as the worker writes it (write_message, pack_arrays), read back as bytes."""
    specs, payloads = protocol.pack_arrays(list(arrays))
    with tempfile.TemporaryFile(buffering=0) as f:
        protocol.write_message(f.fileno(), dict(header, arrays=specs), payloads)
        f.seek(0)
        return f.read()


def test_a_ready_reply():
    assert reply(written({"op": "ready", "ok": True, "backend": "cpu"}), "ready") == Ready("ready", backend="cpu")


@pytest.mark.parametrize("op, expect", [("cancel", ("batch", "cancel")), ("mark", "mark"), ("load", "load")])
def test_the_end_of_a_cancelled_batch_a_mark_and_a_load_carry_nothing_else(op, expect):
    assert reply(written({"op": op, "ok": True}), expect) == Reply(op)


@pytest.mark.parametrize("together", [True, False, None, 1])
def test_an_array_result_comes_back_as_sent(together):
    sent = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    header = {"op": "call", "ok": True, "seconds": 1, "jit": {"used": False, "error": "ConcretizationTypeError"},
              "result": {"type": "array", "dtype": "float32", "shape": [2, 3]}}
    if together is not None:
        header["together"] = together
    got = reply(written(header, [sent]))
    assert (got.ok, got.seconds, got.jit_used, got.jit_error, got.together) == (
        True, 1.0, False, "ConcretizationTypeError", together is True)
    assert isinstance(got.seconds, float)
    assert (got.result.type, got.result.dtype, got.result.shape) == ("array", "float32", (2, 3))
    assert got.result.array.dtype == np.float32 and np.array_equal(got.result.array, sent)


@pytest.mark.parametrize("dtype", sorted(DECODABLE))
def test_every_decodable_dtype_comes_back_exactly(dtype):
    sent = (np.arange(5) % 2 == 1) if dtype == "bool" else (np.arange(5) * 3 + 1).astype(dtype)
    got = reply(written(array_result(dtype, (5,)), [sent]))
    assert got.result.array.dtype == np.dtype(dtype) and np.array_equal(got.result.array, sent)


def test_an_array_of_an_undecodable_dtype_is_named_not_decoded_and_its_bytes_consumed():
    header = result({"type": "array", "dtype": "bfloat16", "shape": [3]}, [spec("bfloat16", (3,), 6)])
    data = message(header, b"\1" * 6) + message({"op": "cancel", "ok": True})
    with tempfile.TemporaryFile(buffering=0) as f:
        f.write(data)
        f.seek(0)
        got = operations.parse_reply(*protocol.read_message(f.fileno(), max_payload=BOUND), "call")
        after = operations.parse_reply(*protocol.read_message(f.fileno(), max_payload=BOUND), ("batch", "cancel"))
    assert got.result == Result("array", "bfloat16", (3,), None)
    assert after.op == "cancel"  # the next message starts right after the undecoded bytes


def test_an_array_result_whose_bytes_were_omitted():
    got = reply(written(result({"type": "array", "dtype": "float32", "shape": [50_000_000], "omitted": True})))
    assert got.result == Result("array", "float32", (50_000_000,), None)


@pytest.mark.parametrize("res, expected", [({"type": "NoneType"}, Result("NoneType")),
                                           ({"type": "float", "dtype": None}, Result("float")),
                                           ({"type": "int32", "dtype": "int32"}, Result("int32", "int32"))])
def test_a_result_that_is_not_an_array(res, expected):
    assert reply(written(result(res))).result == expected


@pytest.mark.parametrize("op", sorted(set(OPERATIONS) - {"ready", "quit"}))
def test_an_error_reply_answers_any_request_but_the_ready_one(op):
    got = reply(written(error(op)), op)
    assert got == OPERATIONS[op].reply(op, ok=False, error=ERROR)


def test_an_error_reply_s_optional_fields_default():
    got = reply(written({"op": "call", "ok": False, "error": {"kind": "not_implemented", "type": "NotImplementedError",
                                                "message": "TODO"}}))
    assert got.error == {"kind": "not_implemented", "type": "NotImplementedError", "message": "TODO", "file": None,
                         "line": None, "during": "call", "traceback": ""}


def test_a_parameter_tree_and_its_values():
    assert reply(written({"op": "params", "ok": True, "params": None}), "params") == Tree("params")
    tree = {"dense/kernel": [3, 2], "dense/bias": [2]}
    assert reply(written({"op": "params", "ok": True, "params": tree}), "params") == Tree("params", params=tree)
    kernel, bias = np.ones((3, 2), np.float32), np.zeros(2, np.float32)
    got = reply(written({"op": "params", "ok": True, "params": tree, "paths": ["dense/bias", "dense/kernel"]},
                        [bias, kernel]),
                "params")
    assert got.params == tree and set(got.values) == set(tree)
    assert np.array_equal(got.values["dense/kernel"], kernel) and np.array_equal(got.values["dense/bias"], bias)


def test_recorded_module_calls_and_their_arrays():
    recorded = [{"path": "dense", "inputs": [0], "outputs": [1]}]
    got = reply(written({"op": "capture", "ok": True, "calls": recorded},
                        [np.ones(2, np.float32), np.zeros(3, np.int32)]), "capture")
    assert isinstance(got, Recorded)
    assert got.calls == recorded
    assert [(a.dtype.name, a.shape) for a in got.arrays] == [("float32", (2,)), ("int32", (3,))]


def test_messages_back_to_back_are_read_in_order():
    data = (written({"op": "ready", "ok": True, "backend": "cpu"}) + written({"op": "load", "ok": True})
            + written({**array_result(), "op": "batch"}, [np.full(4, 2, np.float32)])
            + written({"op": "cancel", "ok": True}))
    with tempfile.TemporaryFile(buffering=0) as f:
        f.write(data)
        f.seek(0)
        got = [operations.parse_reply(*protocol.read_message(f.fileno(), max_payload=BOUND), expect)
               for expect in ("ready", "load", ("batch", "cancel"), ("batch", "cancel"))]
    assert [g.op for g in got] == ["ready", "load", "batch", "cancel"]
    assert [type(g) for g in got] == [Ready, Reply, Returned, Reply]
    assert got[2].result.array.tolist() == [2.0] * 4


# -- a message cut short: the worker died --------------------------------------------------------------


@pytest.mark.parametrize("keep", [0, 3, 4, 10, -1], ids=["nothing", "part of the length", "only the length",
                                                           "part of the header", "all but a byte"])
def test_a_message_cut_short_is_the_end_of_the_worker_not_a_forgery(keep):
    whole = written(array_result(), [np.ones(4, np.float32)])
    with pytest.raises(EOFError):
        read(whole[:keep])
