"""The wire format between the grader and a worker process, and the checks on every reply.

A message is a 4-byte big-endian length, a UTF-8 JSON header of that length, then the raw bytes of the
arrays the header lists under ``"arrays"`` (``{"dtype", "shape", "nbytes"}`` each), one after another.
Nothing is pickled.

A worker runs learner code, which can write anything to its end of the pipe: every reply is untrusted
input. :func:`read_message` bounds what it reads (the header's size, the arrays' total size, which the
caller ties to the expected output's size) before reading it, and :func:`parse_reply` checks a reply
against the schema below, turning anything else into a :class:`ProtocolError`:

- ``{"op": "ready", "backend": str}``, ``{"op": "cancelled"}``;
- ``{"ok": true}`` (a module loaded), ``{"ok": true, "params": {path: [int, ...]} | null}`` (with
  ``"paths": [path, ...]`` and one array each where values were asked for);
- ``{"ok": true, "calls": [...]}``, a model's recorded module calls (:mod:`grader.sandbox.intercept`; from the
  trusted worker only), with their arrays;
- ``{"ok": true, "result": RESULT, "seconds": number, "jit": {"used": bool, "error": str | null},
  "together"?: bool}`` with the array's bytes when RESULT is ``{"type": "array", "dtype", "shape"}`` and
  they fit the bound (else RESULT says ``"omitted": true``); any other RESULT is ``{"type": str,
  "dtype"?: str}``. The bytes' description is the result's own dtype and shape. The bound is the
  request's (``max_bytes``), which only the grader knows: :func:`check_bound` checks a result against
  it (an array said to be omitted must be larger than the bound, one sent must fit it);
- ``{"ok": false, "error": {"kind", "type", "message", "file", "line", "during", "traceback"}}``.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass

from typing import TYPE_CHECKING

from grader.core.cut import cut

if TYPE_CHECKING:  # imported where used: `grade` forks its zygote before importing NumPy
    import numpy as np

MAX_REPLY_HEADER = 1 << 20
MAX_REQUEST_HEADER = 1 << 26  # from the grader: trusted, but bounded all the same
MAX_TEXT = 8192  # characters kept of any one string a worker sends (TEXT_CUT included where it is cut)
TEXT_CUT = " [...]"  # the end of a string cut
MAX_DIMS = 32
MAX_ELEMENTS = 1 << 48  # of an array's shape with its empty axes counted as 1 (NumPy indexes with 64-bit offsets)
MAX_ARRAYS = 4096  # arrays in one message (a model's recorded module calls have hundreds)
ERROR_KINDS = ("exception", "not_implemented", "missing", "memory", "exit", "signature")

# Dtypes the grader decodes; any other dtype is reported by name only.
DECODABLE = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
     "float16", "float32", "float64", "complex64", "complex128"]
)


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed message."""


def array_spec(arr: np.ndarray) -> dict:
    return {"dtype": arr.dtype.name, "shape": list(arr.shape), "nbytes": arr.nbytes}


def pack_arrays(arrays: list[np.ndarray]) -> tuple[list[dict], list[bytes]]:
    """Descriptions (with byte counts) and payloads for a list of arrays, ready for write_message."""
    import numpy as np

    arrays = [np.ascontiguousarray(a) for a in arrays]
    return [array_spec(a) for a in arrays], [a.tobytes() for a in arrays]


def write_message(fd: int, header: dict, payloads: list[bytes] = ()) -> None:
    head = json.dumps(header).encode()
    view = memoryview(struct.pack(">I", len(head)) + head + b"".join(payloads))
    while view:
        view = view[os.write(fd, view):]


def read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int, max_header: int = MAX_REPLY_HEADER,
                 max_payload: int = 1 << 30) -> tuple[dict, list[np.ndarray | None]]:
    """One message, refused before it is read when it announces more than the bounds allow; arrays of
    undecodable dtypes come back as None."""
    (size,) = struct.unpack(">I", read_exact(fd, 4))
    if size > max_header:
        raise ProtocolError(f"a header of {size} bytes (at most {max_header})")
    try:
        header = json.loads(read_exact(fd, size))
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"a header that is not JSON ({type(exc).__name__})") from None
    if not isinstance(header, dict):
        raise ProtocolError("a header that is not a JSON object")
    specs = header.get("arrays", [])
    if not isinstance(specs, list) or len(specs) > MAX_ARRAYS:
        raise ProtocolError(f"'arrays' is not a list of at most {MAX_ARRAYS}")
    checked = [_check_spec(spec) for spec in specs]
    total = sum(nbytes for _, _, nbytes in checked)
    if total > max_payload:
        raise ProtocolError(f"{total} bytes of arrays announced (at most {max_payload})")
    return header, [_decode(read_exact(fd, nbytes), name, shape) for name, shape, nbytes in checked]


def _check_spec(spec) -> tuple[str, tuple[int, ...], int]:
    try:
        name, shape, nbytes = spec["dtype"], tuple(spec["shape"]), spec["nbytes"]
    except (KeyError, TypeError):
        raise ProtocolError(f"an array description without dtype, shape and nbytes: {str(spec)[:200]}") from None
    if not isinstance(name, str) or not _is_int(nbytes) or nbytes < 0 or not _is_shape(shape):
        raise ProtocolError(f"a malformed array description: {str(spec)[:200]}")
    import numpy as np

    if name in DECODABLE and nbytes != math.prod(shape) * np.dtype(name).itemsize:
        raise ProtocolError(f"{nbytes} bytes do not make a {name} array of shape {shape}")
    if math.prod(max(d, 1) for d in shape) > MAX_ELEMENTS:  # an empty array whose other axes NumPy cannot index
        raise ProtocolError(f"an array of shape {shape}: more elements along its axes than an array may have")
    return name, shape, nbytes


def _decode(raw: bytes, name: str, shape: tuple[int, ...]) -> np.ndarray | None:
    import numpy as np

    if name not in DECODABLE:
        return None
    return np.frombuffer(raw, dtype=np.dtype(name)).reshape(shape).copy()


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_shape(shape) -> bool:
    return len(shape) <= MAX_DIMS and all(_is_int(s) and 0 <= s < 1 << 40 for s in shape)


# -- replies --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """What the entry returned: an array (``array`` is None when its bytes were not sent), or another
    kind of value, known by its type's name."""

    type: str
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    array: np.ndarray | None = None


@dataclass(frozen=True)
class Reply:
    ok: bool
    op: str | None = None  # "ready" or "cancelled"; None for an answer to a request
    backend: str | None = None
    result: Result | None = None
    error: dict | None = None
    seconds: float = 0.0
    jit_used: bool = False
    jit_error: str | None = None
    together: bool = False
    params: dict[str, list[int]] | None = None
    values: dict | None = None  # the parameters' initial values by path, where asked for ("params")
    calls: list[dict] | None = None  # recorded module calls, their arrays in ``arrays``
    arrays: list | None = None


def _text(value, what: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"{what} is not a string")
    return cut(value, MAX_TEXT, TEXT_CUT)


def parse_reply(header: dict, arrays: list, expect: str) -> Reply:
    """Check one reply against the schema in the module's docstring: ``expect`` is what the request
    asked for: "ready", "loaded", "result", "params", "calls", "mark", or "cancel" (a result or the end
    of a cancelled batch)."""
    op = header.get("op")
    if op is not None:
        if (op, expect) == ("ready", "ready"):
            return Reply(ok=True, op=op, backend=_text(header.get("backend"), "backend"))
        if (op, expect) in (("cancelled", "cancel"), ("marked", "mark")):
            return Reply(ok=True, op=op)
        raise ProtocolError(f"a reply {str(op)[:50]!r} where a {expect!r} reply was due")
    ok = header.get("ok")
    if ok is False and expect != "ready":
        return Reply(ok=False, error=_error(header.get("error")))
    if ok is not True:
        raise ProtocolError(f"a reply without 'ok' where a {expect!r} reply was due")
    if expect == "loaded":
        return Reply(ok=True)
    if expect == "params":
        params = header.get("params")
        if params is not None and not (isinstance(params, dict) and all(
                isinstance(k, str) and isinstance(v, list) and _is_shape(v) for k, v in params.items())):
            raise ProtocolError("a malformed parameter tree")
        values = None
        if "paths" in header:
            paths = header["paths"]
            if params is None or not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)
                                      and sorted(paths) == sorted(params)
                                      and len(paths) == len(arrays)):
                raise ProtocolError("parameter values that do not match the parameter tree")
            values = dict(zip(paths, arrays))
            if any(a is None or list(a.shape) != params[p] for p, a in values.items()):
                raise ProtocolError("parameter values that do not match the parameter tree")
        elif arrays:
            raise ProtocolError("array bytes with a parameter tree")
        return Reply(ok=True, params=params, values=values)
    if expect == "calls":
        calls = header.get("calls")
        if not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
            raise ProtocolError("a malformed list of module calls")
        return Reply(ok=True, calls=calls, arrays=arrays)
    if expect not in ("result", "cancel") or "result" not in header:
        raise ProtocolError(f"a reply without a result where a {expect!r} reply was due")
    jit = header.get("jit")
    seconds = header.get("seconds")
    if not isinstance(jit, dict) or not isinstance(jit.get("used"), bool) \
            or not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds):
        raise ProtocolError("a result without its timing and jit report")
    return Reply(ok=True, result=_result(header["result"], arrays, header.get("arrays", [])), seconds=float(seconds),
                 jit_used=jit["used"],
                 jit_error=_text(jit.get("error"), "jit error", optional=True),
                 together=header.get("together") is True)


def _result(result, arrays: list, specs: list) -> Result:
    if not isinstance(result, dict):
        raise ProtocolError("a result that is not an object")
    kind = _text(result.get("type"), "the result's type")
    dtype = _text(result.get("dtype"), "the result's dtype", optional=True)
    if kind != "array":
        if arrays:
            raise ProtocolError("array bytes with a result that is not an array")
        return Result(kind, dtype)
    shape = result.get("shape")
    if dtype is None or not isinstance(shape, list) or not _is_shape(shape):
        raise ProtocolError("an array result without dtype and shape")
    if result.get("omitted") is True:
        if arrays:
            raise ProtocolError("array bytes with a result that says they were omitted")
        return Result(kind, dtype, tuple(shape))
    # The bytes' own description, not the decoded array: an undecodable dtype decodes to None, and bytes of
    # one would otherwise pass under a result that names another (a decodable one, whose array is then missing).
    if len(arrays) != 1 or len(specs) != 1 or specs[0]["dtype"] != dtype or list(specs[0]["shape"]) != shape:
        raise ProtocolError("an array result whose bytes do not match its description")
    return Result(kind, dtype, tuple(shape), arrays[0])


def result_bytes(result: Result) -> int | None:
    """How many bytes an array result's array takes (None where its dtype is not one the grader decodes)."""
    if result.type != "array" or result.dtype not in DECODABLE:
        return None
    import numpy as np

    return math.prod(result.shape) * np.dtype(result.dtype).itemsize


def check_bound(reply: Reply, max_bytes: int) -> Reply:
    """``reply``, checked against the bound its request set (``max_bytes``): a worker sends the bytes of every
    array of at most that size and omits those of larger ones, so an array result that says it was omitted
    but fits, or whose bytes came over the bound, is a forgery (a :class:`ProtocolError`). Only the grader
    knows the bound of a reply (a batch's replies each have their own), hence a check of its own."""
    result = reply.result
    nbytes = None if result is None else result_bytes(result)
    if nbytes is None:
        return reply
    if result.array is None and nbytes <= max_bytes:
        raise ProtocolError(f"an array result of {nbytes} bytes said to be too large to send, where its request "
                            f"allowed {max_bytes}")
    if result.array is not None and nbytes > max_bytes:
        raise ProtocolError(f"an array result of {nbytes} bytes, where its request allowed {max_bytes}")
    return reply


def _error(error) -> dict:
    if not isinstance(error, dict) or error.get("kind") not in ERROR_KINDS:
        raise ProtocolError("an error reply without a known kind")
    line = error.get("line")
    if line is not None and not _is_int(line):
        raise ProtocolError("an error reply whose line is not a number")
    return {"kind": error["kind"], "type": _text(error.get("type"), "the error's type"),
            "message": _text(error.get("message"), "the error's message"),
            "file": _text(error.get("file"), "the error's file", optional=True), "line": line,
            "during": _text(error.get("during", "call"), "the error's phase"),
            "traceback": _text(error.get("traceback", ""), "the error's traceback")}
