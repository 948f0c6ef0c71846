"""The wire format between the grader and a worker process.

A message is a 4-byte big-endian length, a UTF-8 JSON header of that length, then the raw bytes of the
arrays the header lists under ``"arrays"`` (``{"dtype", "shape"}`` each), one after another. Nothing is
pickled: the grader only ever reads JSON and plain array bytes, so whatever runs in the worker can send
wrong numbers, but never objects.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

MAX_HEADER = 1 << 20
MAX_PAYLOAD = 1 << 30

# Dtypes the grader decodes; any other dtype is reported by name only.
DECODABLE = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
     "float16", "float32", "float64", "complex64", "complex128"]
)


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed message."""


def encode_array(arr: np.ndarray) -> tuple[dict, bytes]:
    arr = np.ascontiguousarray(arr)
    return {"dtype": arr.dtype.name, "shape": list(arr.shape)}, arr.tobytes()


def write_message(fd: int, header: dict, payloads: list[bytes] = ()) -> None:
    head = json.dumps(header).encode()
    data = struct.pack(">I", len(head)) + head + b"".join(payloads)
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int) -> tuple[dict, list[np.ndarray | None]]:
    """Read one message; arrays of undecodable dtypes come back as None."""
    (size,) = struct.unpack(">I", read_exact(fd, 4))
    if size > MAX_HEADER:
        raise ProtocolError(f"header of {size} bytes")
    try:
        header = json.loads(read_exact(fd, size))
    except ValueError as exc:
        raise ProtocolError(f"header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not a JSON object")
    arrays = []
    specs = header.get("arrays", [])
    if not isinstance(specs, list):
        raise ProtocolError("'arrays' is not a list")
    for spec in specs:
        arrays.append(_read_array(fd, spec))
    return header, arrays


def _read_array(fd: int, spec) -> np.ndarray | None:
    try:
        name, shape = str(spec["dtype"]), [int(s) for s in spec["shape"]]
        nbytes = int(spec["nbytes"])
    except (KeyError, TypeError, ValueError):
        raise ProtocolError(f"bad array description {spec!r}") from None
    if any(s < 0 for s in shape) or not 0 <= nbytes <= MAX_PAYLOAD:
        raise ProtocolError(f"bad array description {spec!r}")
    raw = read_exact(fd, nbytes)
    if name not in DECODABLE:
        return None
    dtype = np.dtype(name)
    if nbytes != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
        raise ProtocolError(f"{nbytes} bytes do not make a {name} array of shape {tuple(shape)}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def pack_arrays(arrays: list[np.ndarray]) -> tuple[list[dict], list[bytes]]:
    """Headers (with byte counts) and payloads for a list of arrays, ready for write_message."""
    specs, payloads = [], []
    for arr in arrays:
        spec, raw = encode_array(arr)
        spec["nbytes"] = len(raw)
        specs.append(spec)
        payloads.append(raw)
    return specs, payloads
