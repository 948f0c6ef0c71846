"""The wire format between the grader and a worker process: how a message is framed, and the bounds on
reading one.

A message is a 4-byte big-endian length, a UTF-8 JSON header of that length, then the raw bytes of the
arrays the header lists under ``"arrays"`` (``{"dtype", "shape", "nbytes"}`` each), one after another.
Nothing is pickled. What each message says (the operations and their replies) is
:mod:`grader.sandbox.operations`'s.

A worker runs learner code, which can write anything to its end of the pipe: every reply is untrusted
input. :func:`read_message` bounds what it reads (the header's size, the arrays' total size, which the
caller ties to the expected output's size) before reading it, turning a message over a bound or one that
is not well-formed into a :class:`ProtocolError`; :func:`grader.sandbox.operations.parse_reply` then checks
the reply's fields.
"""

from __future__ import annotations

import json
import math
import os
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `grade` forks its zygote before importing NumPy
    import numpy as np

MAX_REPLY_HEADER = 1 << 20
MAX_REQUEST_HEADER = 1 << 26  # from the grader: trusted, but bounded all the same
MAX_TEXT = 8192  # characters kept of any one string a worker sends (TEXT_CUT included where it is cut)
TEXT_CUT = " [...]"  # the end of a string cut
MAX_DIMS = 32
MAX_ELEMENTS = 1 << 48  # of an array's shape with its empty axes counted as 1 (NumPy indexes with 64-bit offsets)
MAX_ARRAYS = 4096  # arrays in one message (a model's recorded module calls have hundreds)

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
    if not isinstance(name, str) or not is_int(nbytes) or nbytes < 0 or not is_shape(shape):
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


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_shape(shape) -> bool:
    return len(shape) <= MAX_DIMS and all(is_int(s) and 0 <= s < 1 << 40 for s in shape)
