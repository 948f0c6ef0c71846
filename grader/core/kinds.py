"""The kinds of argument a problem's entry function takes, in one registry.

A problem's ``problem.toml`` names each argument's kind (``int``, ``bool``, ``float``, ``str``,
``str:<choice>|<choice>...`` or ``array:<dtype>``).
Everything the harness does with an argument goes through its :class:`Kind`: checking what a strategy
or a case file gives, sending it to a worker and decoding it there, keeping it in a case file, hashing
it into cache keys, and telling whether it is part of a traced program's signature. A new kind of
argument (a PRNG key, a pytree) is one more entry in :data:`KINDS`; :func:`kind` finds any of them.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any, Callable

ARRAY_DTYPES = ("float32", "float64", "int32", "int64")
# Not an argument: a case's mark that the entry runs with its Flax parameters moved away from what
# ``init`` gives (see :mod:`grader.sandbox.moved`). True moves every parameter; a tuple of paths (inside the
# ``params`` collection, ``a/b/kernel``) moves those alone. It travels beside the arguments.
MOVED = "@moved"
MAX_ARRAY_VALUES = 1 << 24  # an argument larger than this is an instructor's mistake, not an input


class KindError(ValueError):
    """A value does not fit its argument's kind."""


@dataclass(frozen=True)
class Kind:
    """How the harness handles one kind of argument.

    ``coerce`` turns what a strategy or a case file gives into the canonical value (or raises
    KindError); ``static`` says whether the value is a static argument of the jitted entry (so part of
    the program's signature); ``wire`` is "value" (sent in the JSON header) or "array" (sent as raw
    bytes); ``to_json``/``from_json`` keep a value in a case file; ``digest`` hashes it for cache keys.
    """

    name: str
    static: bool
    wire: str
    coerce: Callable[[Any], Any]
    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]

    def digest(self, value) -> bytes:
        if self.wire == "array":
            return f"{value.dtype.name}:{value.shape}:".encode() + value.tobytes()
        return f"{type(value).__name__}:{value!r}".encode()

    def signature(self, value):
        """What of ``value`` a traced program depends on (static value, or the array's shape)."""
        if self.wire == "array":
            return tuple(value.shape)
        return value if self.static else None


def _int(value):
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise KindError(f"must be an int, got {value!r}")
    return int(value)


def _float(value):
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise KindError(f"must be a number, got {value!r}")
    return float(value)


def _bool(value):
    import numpy as np

    if not isinstance(value, (bool, np.bool_)):
        raise KindError(f"must be true or false, got {value!r}")
    return bool(value)


def _str(choices: tuple[str, ...] | None = None) -> Kind:
    """A string, static (a method's name: each value its own program); with ``choices``, one of them."""
    def coerce(value):
        import numpy as np

        if not isinstance(value, (str, np.str_)):
            raise KindError(f"must be a string, got {value!r}")
        if choices is not None and value not in choices:
            raise KindError(f"must be one of {', '.join(map(repr, choices))}, got {str(value)!r}")
        return str(value)

    name = "str" if choices is None else "str:" + "|".join(choices)
    return Kind(name, static=True, wire="value", coerce=coerce, to_json=lambda v: v, from_json=coerce)


def _array(dtype: str):
    def coerce(value):
        import numpy as np

        if isinstance(value, dict):  # {shape, data}: the one form that writes an empty (0, D) array in TOML
            return from_json(value)
        try:
            arr = np.ascontiguousarray(np.asarray(value, dtype=dtype))
        except (TypeError, ValueError, OverflowError) as exc:
            raise KindError(f"must be an array of {dtype}: {exc}") from None
        if arr.size > MAX_ARRAY_VALUES:
            raise KindError(f"has {arr.size} values, more than the {MAX_ARRAY_VALUES} an input may have")
        return arr

    def to_json(value):
        return {"dtype": value.dtype.name, "shape": list(value.shape), "data": value.reshape(-1).tolist()}

    def from_json(data):
        import numpy as np

        if not isinstance(data, dict) or not {"shape", "data"} <= set(data):
            raise KindError("must be an object with 'shape' and 'data'")
        try:
            return coerce(np.asarray(data["data"], dtype=dtype).reshape(data["shape"]))
        except (TypeError, ValueError) as exc:
            raise KindError(str(exc)) from None

    return Kind(f"array:{dtype}", static=False, wire="array", coerce=coerce, to_json=to_json, from_json=from_json)


KINDS: dict[str, Kind] = {
    "int": Kind("int", static=True, wire="value", coerce=_int, to_json=lambda v: v, from_json=_int),
    "bool": Kind("bool", static=True, wire="value", coerce=_bool, to_json=lambda v: v, from_json=_bool),
    "float": Kind("float", static=False, wire="value", coerce=_float, to_json=lambda v: v, from_json=_float),
    "str": _str(),
    **{f"array:{dtype}": _array(dtype) for dtype in ARRAY_DTYPES},
}
CHOICES = "str:"  # a kind ``str:<choice>|<choice>...``: one of the strings it lists


def kind(name) -> Kind:
    """The kind named ``name``: one of :data:`KINDS`, or ``str:a|b|c`` (one of the strings listed, each
    without spaces around it, none twice); KindError for anything else."""
    if isinstance(name, str):
        if name in KINDS:
            return KINDS[name]
        if name.startswith(CHOICES):
            return _choices(name)
    raise KindError(f"must be one of the kinds {', '.join(KINDS)} or str:<choice>|<choice>..., got {name!r}")


@functools.cache
def _choices(name: str) -> Kind:
    choices = tuple(name.removeprefix(CHOICES).split("|"))
    if not all(c and c.strip() == c for c in choices) or len(set(choices)) != len(choices):
        raise KindError(f"lists its strings as str:<choice>|<choice>..., each once, without spaces around "
                        f"it; got {name!r}")
    return _str(choices)


def moved(args: dict) -> bool | tuple[str, ...]:
    """What of the parameters ``args`` runs the entry with moved: False, True (all), or some paths."""
    value = args.get(MOVED, False)
    return tuple(value) if isinstance(value, (list, tuple)) else bool(value)


def with_moved(args: dict, value: bool | tuple[str, ...]) -> dict:
    """``args`` with its parameters moved as ``value`` says (False: as ``init`` gives them)."""
    plain = {name: v for name, v in args.items() if name != MOVED}
    if isinstance(value, (list, tuple)):
        return {**plain, MOVED: tuple(value)}
    return {**plain, MOVED: True} if value else plain


def args_digest(kinds: dict[str, str], args: dict) -> str:
    """A short hash of one input, the key of everything cached per input (its moved parameters too)."""
    h = hashlib.sha256()
    for name in sorted(kinds):
        h.update(f"{name}={kinds[name]}:".encode() + kind(kinds[name]).digest(args[name]) + b";")
    if moved(args):
        h.update(f"{MOVED}={moved(args)!r};".encode())
    return h.hexdigest()[:32]


def encode(kinds: dict[str, str], args: dict, arrays: list) -> list[dict]:
    """The wire form of one call's arguments, in signature order; arrays are appended to ``arrays``
    (several calls can share one message)."""
    entries = []
    for name, kind_name in kinds.items():
        value = args[name]
        if kind(kind_name).wire == "array":
            entries.append({"name": name, "kind": kind_name, "index": len(arrays)})
            arrays.append(value)
        else:
            entries.append({"name": name, "kind": kind_name, "value": value})
    return entries


def decode(entries: list[dict], arrays: list) -> tuple[list, tuple[int, ...]]:
    """In the worker: the call's arguments (arrays as NumPy arrays) and the positions of the static ones."""
    values, static = [], []
    for i, entry in enumerate(entries):
        k = kind(entry["kind"])
        values.append(arrays[entry["index"]] if k.wire == "array" else k.coerce(entry["value"]))
        if k.static:
            static.append(i)
    return values, tuple(static)


def signature(kinds: dict[str, str], args: dict) -> tuple:
    """What a traced program of the entry depends on: calls with equal signatures share one trace (some
    parameters moved, not all or none, are constants of a program of their own)."""
    which = moved(args)
    return tuple(kind(k).signature(args[name]) for name, k in kinds.items()) + ((which,) if isinstance(which, tuple) else ())
