"""What the grader asks a worker and what the worker answers: for each operation, its request builder and
its reply type, in one table (:data:`OPERATIONS`).

A request is a header ``{"op": NAME, ...}`` and the arrays whose bytes follow it (:mod:`grader.sandbox.protocol`
carries both); the worker's handler of each operation is in :mod:`grader.sandbox.worker`. Every reply says
the operation it answers under ``"op"`` and whether it succeeded under ``"ok"``:

- ``ready``: the worker's first message, unasked: ``{"backend": str}``; never an error;
- ``load``, ``mark``, ``cancel``: nothing more (``cancel`` also ends a batch that stopped early);
- ``call``, ``batch`` (one reply per call), ``substitute``, ``part``: ``{"result": RESULT, "seconds": number,
  "jit": {"used": bool, "error": str | null}, "together"?: bool}`` with the array's bytes when RESULT is
  ``{"type": "array", "dtype", "shape"}`` and they fit the bound (else RESULT says ``"omitted": true``); any
  other RESULT is ``{"type": str, "dtype"?: str}``. The bytes' description is the result's own dtype and
  shape. The bound is the request's (``max_bytes``), which only the grader knows: :func:`check_bound` checks
  a result against it (an array said to be omitted must be larger than the bound, one sent must fit it);
- ``params``: ``{"params": {path: [int, ...]} | null}``, with ``"paths": [path, ...]`` and one array each
  where values were asked for;
- ``capture``: ``{"calls": [...]}``, a model's recorded module calls (:mod:`grader.sandbox.intercept`; from
  the trusted worker only), with their arrays;
- ``quit``: no reply;
- an error, for any operation but ``ready``: ``{"ok": false, "error": {"kind", "type", "message", "file",
  "line", "during", "traceback"}}``.

A worker runs learner code, which can write anything to its end of the pipe: :func:`parse_reply` checks
each reply against this schema, turning anything else into a :class:`~grader.sandbox.protocol.ProtocolError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from grader.core import kinds
from grader.core.cut import cut
from grader.sandbox.protocol import DECODABLE, MAX_TEXT, TEXT_CUT, ProtocolError, is_int, is_shape

if TYPE_CHECKING:  # imported where used: `grade` forks its zygote before importing NumPy
    import numpy as np

ERROR_KINDS = ("exception", "not_implemented", "missing", "memory", "exit", "signature")


# -- requests -------------------------------------------------------------------------------------------


class Request(NamedTuple):
    """One request: its header (the operation's name under ``"op"``) and the arrays whose bytes follow it, in
    the order ``Worker.request(header, arrays)`` takes them."""

    header: dict
    arrays: list


def _encoded(op: str, names: dict, args: dict, **fields) -> Request:
    """A request that carries one call's arguments (``names``: the problem's, name -> kind)."""
    arrays: list = []
    entries = kinds.encode(names, args, arrays)
    return Request({"op": op, **fields, "args": entries}, arrays)


def load(key: str, path: str, entry: str, arg_names: list[str], source: bytes, memory_mib: int = 0,
         moves: bool = False) -> Request:
    """Compile ``source`` as the module at ``path`` and keep its ``entry`` function under ``key`` (it must take
    ``arg_names``); with ``memory_mib``, first limit the address space to that many MiB; ``moves``: the
    problem's calls may move the parameters (:mod:`grader.sandbox.moved`)."""
    import numpy as np

    return Request({"op": "load", "key": key, "path": path, "entry": entry, "arg_names": list(arg_names),
                    "memory_mib": memory_mib, "moves": moves}, [np.frombuffer(source, dtype=np.uint8)])


def call(key: str, names: dict, args: dict, jit: bool, max_bytes: int) -> Request:
    """Call the entry on ``args`` (with its parameters moved as they say), under ``jax.jit`` when ``jit`` and
    it traces, otherwise eagerly; an array larger than ``max_bytes`` is described but not sent."""
    return _encoded("call", names, args, key=key, jit=jit, moved=kinds.moved(args), max_bytes=max_bytes)


def batch(key: str, names: dict, cases: list[tuple[dict, int]], jit: bool) -> Request:
    """Several calls, ``(args, max_bytes)`` each, one reply each; a :func:`cancel` stops them."""
    arrays: list = []
    calls = [{"args": kinds.encode(names, args, arrays), "moved": kinds.moved(args), "max_bytes": max_bytes}
             for args, max_bytes in cases]
    return Request({"op": "batch", "key": key, "calls": calls, "jit": jit}, arrays)


def params(key: str, names: dict, args: dict, values: bool = False) -> Request:
    """The Flax parameter tree (paths and shapes) the entry creates for ``args``, found by tracing without
    computing; with ``values``, their initial values too."""
    return _encoded("params", names, args, key=key, values=values)


def substitute(key: str, names: dict, args: dict, values: dict[str, np.ndarray], max_bytes: int) -> Request:
    """The entry's output on ``args`` where each parameter it creates takes the value ``values`` gives its
    path (``{path: array}``) in place of its initial one; answered like a call."""
    request = _encoded("substitute", names, args, key=key, max_bytes=max_bytes)
    paths = sorted(values)
    return Request(dict(request.header, paths=paths), request.arrays + [values[path] for path in paths])


def capture(key: str, names: dict, args: dict, classes: list[str], methods: list, functions: list) -> Request:
    """The entry's calls on ``args`` of those module classes, their methods and helper functions, recorded
    (trusted modules only; see :mod:`grader.sandbox.intercept`)."""
    return _encoded("capture", names, args, key=key, classes=classes, methods=methods, functions=functions,
                    moved=kinds.moved(args))


def part(key: str, call: dict, args: list, kwargs: dict, variables: dict, arrays: list, max_bytes: int) -> Request:
    """One module class of the file (or one of its methods, or, with ``function``, one helper function), as
    ``call`` recorded it (its ``cls``, ``method``, ``function``, ``fields``), applied alone to ``variables``
    and arguments encoded as the recording encodes them (indices into ``arrays``); answered like a call."""
    return Request({"op": "part", "key": key, "cls": call["cls"], "method": call.get("method"),
                    "function": bool(call.get("function")), "fields": call["fields"], "args": args,
                    "kwargs": kwargs, "variables": variables, "max_bytes": max_bytes}, arrays)


def mark(text: str) -> Request:
    """Write ``text`` to the printed output after all printed so far: the grader finds where its later
    requests' output begins (a replay shows only its own case's)."""
    return Request({"op": "mark", "text": text}, [])


def cancel() -> Request:
    """Stop the batch under way (answered once it has stopped, or at once where none is)."""
    return Request({"op": "cancel"}, [])


def quit() -> Request:  # noqa: A001  (the operation's name)
    """End the worker; no reply."""
    return Request({"op": "quit"}, [])


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
    """The answer to ``op``: whether it succeeded, and what was raised where it did not (``error``)."""

    op: str
    ok: bool = True
    error: dict | None = None

    @classmethod
    def parse(cls, op: str, header: dict, arrays: list) -> Reply:
        """A successful reply's fields, checked."""
        return cls(op)


@dataclass(frozen=True)
class Ready(Reply):
    """The worker has started and imported JAX, which runs on ``backend``."""

    backend: str = ""

    @classmethod
    def parse(cls, op: str, header: dict, arrays: list) -> Ready:
        return cls(op, backend=_text(header.get("backend"), "backend"))


@dataclass(frozen=True)
class Returned(Reply):
    """What the entry (or a part of the file) returned, how long it took, and whether it ran under jax.jit
    (``together``: traced with the other calls of a batch)."""

    result: Result | None = None
    seconds: float = 0.0
    jit_used: bool = False
    jit_error: str | None = None
    together: bool = False

    @classmethod
    def parse(cls, op: str, header: dict, arrays: list) -> Returned:
        if "result" not in header:
            raise ProtocolError(f"a reply without a result where a {op!r} reply was due")
        jit = header.get("jit")
        seconds = header.get("seconds")
        if not isinstance(jit, dict) or not isinstance(jit.get("used"), bool) \
                or not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds):
            raise ProtocolError("a result without its timing and jit report")
        return cls(op, result=_result(header["result"], arrays, header.get("arrays", [])), seconds=float(seconds),
                   jit_used=jit["used"], jit_error=_text(jit.get("error"), "jit error", optional=True),
                   together=header.get("together") is True)


@dataclass(frozen=True)
class Tree(Reply):
    """The parameters the entry creates: ``params`` their shapes by path (None where it creates none that
    Flax makes), ``values`` their initial values by path, where asked for."""

    params: dict[str, list[int]] | None = None
    values: dict | None = None

    @classmethod
    def parse(cls, op: str, header: dict, arrays: list) -> Tree:
        params = header.get("params")
        if params is not None and not (isinstance(params, dict) and all(
                isinstance(k, str) and isinstance(v, list) and is_shape(v) for k, v in params.items())):
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
        return cls(op, params=params, values=values)


@dataclass(frozen=True)
class Recorded(Reply):
    """A model's recorded module calls, their arrays in ``arrays``."""

    calls: list[dict] | None = None
    arrays: list | None = None

    @classmethod
    def parse(cls, op: str, header: dict, arrays: list) -> Recorded:
        calls = header.get("calls")
        if not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
            raise ProtocolError("a malformed list of module calls")
        return cls(op, calls=calls, arrays=arrays)


# -- the table ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    """One operation: how it is asked (None: the worker says it unasked) and the type of its reply (None: it
    has none). ``several``: one reply per call it carries, ended early by a ``cancel`` reply."""

    build: Callable[..., Request] | None
    reply: type[Reply] | None
    several: bool = False


OPERATIONS: dict[str, Operation] = {
    "ready": Operation(None, Ready),
    "load": Operation(load, Reply),
    "call": Operation(call, Returned),
    "batch": Operation(batch, Returned, several=True),
    "params": Operation(params, Tree),
    "substitute": Operation(substitute, Returned),
    "capture": Operation(capture, Recorded),
    "part": Operation(part, Returned),
    "mark": Operation(mark, Reply),
    "cancel": Operation(cancel, Reply),
    "quit": Operation(quit, None),
}


def parse_reply(header: dict, arrays: list, expect: str | tuple[str, ...]) -> Reply:
    """Check one reply against the schema in the module's docstring: it must answer ``expect``, the
    operation asked (or one of them: a batch being cancelled answers ``("batch", "cancel")``)."""
    expect = (expect,) if isinstance(expect, str) else expect
    op = header.get("op")
    if op not in expect:
        raise ProtocolError(f"a reply {str(op)[:50]!r} where a {' or '.join(map(repr, expect))} reply was due")
    ok = header.get("ok")
    if ok is False and op != "ready":
        return OPERATIONS[op].reply(op, ok=False, error=_error(header.get("error")))
    if ok is not True:
        raise ProtocolError(f"a reply without 'ok' where a {op!r} reply was due")
    return OPERATIONS[op].reply.parse(op, header, arrays)


def _text(value, what: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"{what} is not a string")
    return cut(value, MAX_TEXT, TEXT_CUT)


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
    if dtype is None or not isinstance(shape, list) or not is_shape(shape):
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


def _error(error) -> dict:
    if not isinstance(error, dict) or error.get("kind") not in ERROR_KINDS:
        raise ProtocolError("an error reply without a known kind")
    line = error.get("line")
    if line is not None and not is_int(line):
        raise ProtocolError("an error reply whose line is not a number")
    return {"kind": error["kind"], "type": _text(error.get("type"), "the error's type"),
            "message": _text(error.get("message"), "the error's message"),
            "file": _text(error.get("file"), "the error's file", optional=True), "line": line,
            "during": _text(error.get("during", "call"), "the error's phase"),
            "traceback": _text(error.get("traceback", ""), "the error's traceback")}


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
    result = getattr(reply, "result", None)
    nbytes = None if result is None else result_bytes(result)
    if nbytes is None:
        return reply
    if result.array is None and nbytes <= max_bytes:
        raise ProtocolError(f"an array result of {nbytes} bytes said to be too large to send, where its request "
                            f"allowed {max_bytes}")
    if result.array is not None and nbytes > max_bytes:
        raise ProtocolError(f"an array result of {nbytes} bytes, where its request allowed {max_bytes}")
    return reply
