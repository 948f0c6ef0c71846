"""Inside a worker: a model's module calls, recorded from one module file and replayed one at a time on
another's classes (the worker's half of "the first wrong part", :mod:`grader.explain.parts`).

``capture`` runs an entry under Flax's method interceptor (inside ``jax.jit``) and records, in the order
the calls finish (so a block comes after the modules it calls), every ``__call__`` of a module whose class is one
of the parts, and every call of a part's method named as a step (``Class.method``): its path in the module
tree, its class and attributes, its variables, its arguments and its output. ``run_part`` builds one class of
the graded file with those attributes and applies it (or that method of it) to those variables and
arguments. Values travel as plain arrays (``{"array": i}``) or JSON scalars (``{"value": v}``).
"""

from __future__ import annotations

import dataclasses
import inspect

from grader.sandbox.trees import flat_tree, merge

SCALARS = (bool, int, float, str, type(None))


class Unsupported(Exception):
    """A value that cannot travel as an array or a JSON scalar: that call is not recorded."""


def _encode(value, arrays: list) -> dict:
    import jax
    import numpy as np

    if isinstance(value, SCALARS):
        return {"value": value}
    if isinstance(value, (np.ndarray, jax.Array)):  # under jax.jit, a tracer: an output of the traced function
        arrays.append(value)
        return {"array": len(arrays) - 1}
    raise Unsupported(type(value).__name__)


def _nested(flat: dict) -> dict:
    tree: dict = {}
    for path, value in flat.items():
        *folders, leaf = path.split("/")
        node = tree
        for folder in folders:
            node = node.setdefault(folder, {})
        node[leaf] = value
    return tree


CAPTURES: dict = {}  # (entry, static arguments, shapes, classes) -> (the recording entry under jax.jit, its calls)


def capture(fn, args: list, classes: list[str], which=False, functions: list[str] = (),
            methods: list[str] = ()) -> tuple[dict, list]:
    """Call ``fn(*args)``, recording the calls of the modules whose class is named in ``classes``, of their
    methods named ``Class.method`` in ``methods`` (each an entry with ``"method"``, its path the module's
    followed by ``.method``) and of the functions of ``fn``'s module named in ``functions`` (each an entry with
    ``"function": true``, its path its name), with the parameters moved as ``which`` says
    (:mod:`grader.sandbox.moved`).

    It runs under ``jax.jit`` (eagerly, every operation of a new shape compiles on its own, which takes
    seconds for a small model): what is recorded while tracing is returned as the traced function's
    outputs, so it comes back as concrete arrays, and the calls' description is kept from the one trace
    for every later call alike in static arguments and shapes."""
    import flax.linen as nn
    import jax
    import numpy as np

    from grader.sandbox import moved, protocol

    # Every argument that is not an array is static here: a module built from one (RMSNorm(eps=eps))
    # then has a plain number as its attribute, which the learner's class can be built with.
    static = tuple(i for i, a in enumerate(args) if not hasattr(a, "shape"))
    dynamic = [a for i, a in enumerate(args) if i not in static]
    key = (fn, tuple(repr(args[i]) for i in static), tuple((np.shape(a), np.result_type(a).name) for a in dynamic),
           tuple(classes), repr(which), tuple(functions), tuple(methods))
    if key not in CAPTURES:
        calls: list[dict] = []

        def traced(*dynamic):
            calls.clear()
            values: list = []

            def keep(entry) -> None:
                """Record the call ``entry()`` describes; one that cannot travel leaves no stray arrays."""
                size = len(values)
                try:
                    calls.append(entry())
                except Unsupported:
                    del values[size:]

            def record(next_fun, call_args, call_kwargs, context):
                out = next_fun(*call_args, **call_kwargs)
                module, method = context.module, context.method_name
                name = type(module).__name__
                wanted = name in classes if method == "__call__" else f"{name}.{method}" in methods
                if not wanted or module.is_initializing():
                    return out
                keep(lambda: _entry(module, method, call_args, call_kwargs, out, values))
                return out

            originals = {name: fn.__globals__[name] for name in functions if callable(fn.__globals__.get(name))}

            def recording(name: str, original):
                def call(*call_args, **call_kwargs):
                    out = original(*call_args, **call_kwargs)
                    if _initializing():  # a call made while init traces the model, as the modules' are skipped
                        return out
                    keep(lambda: _function_entry(name, original, call_args, call_kwargs, out, values))
                    return out
                return call

            fn.__globals__.update({name: recording(name, f) for name, f in originals.items()})
            try:
                with nn.intercept_methods(record), moved.moving(which):
                    fn(*merge(args, static, dynamic))
            finally:
                fn.__globals__.update(originals)
            return values

        CAPTURES[key] = (jax.jit(traced), calls)
    jitted, calls = CAPTURES[key]
    specs, payloads = protocol.pack_arrays([np.asarray(a) for a in jitted(*dynamic)])
    return {"ok": True, "calls": calls, "arrays": specs}, payloads


def _entry(module, method: str, call_args, call_kwargs, out, values: list) -> dict:
    fields = {f.name: getattr(module, f.name) for f in dataclasses.fields(module) if f.name not in ("parent", "name")}
    if not all(isinstance(v, SCALARS) for v in fields.values()):
        raise Unsupported("a module attribute")
    entry = {"path": "/".join(module.path), "cls": type(module).__name__, "fields": fields}
    if method != "__call__":
        entry.update(path=f"{entry['path']}.{method}" if entry["path"] else method, method=method)
    return _recorded(entry, _parameter_names(getattr(type(module), method))[1:], call_args, call_kwargs,
                     flat_tree(module.variables), out, values)


def _initializing() -> bool:
    """Whether the innermost Flax module running now is being initialised (Flax's own context, read as its
    pinned release keeps it; outside any module, not)."""
    from flax.linen.module import _context

    stack = _context.module_stack
    return bool(stack) and stack[-1] is not None and stack[-1].is_initializing()


def _function_entry(name: str, function, call_args, call_kwargs, out, values: list) -> dict:
    return _recorded({"path": name, "cls": name, "function": True, "fields": {}}, _parameter_names(function),
                     call_args, call_kwargs, {}, out, values)


def _parameter_names(function) -> list[str]:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def _recorded(entry: dict, names: list[str], call_args, call_kwargs, variables: dict, out, values: list) -> dict:
    """``entry`` (what was called) with the call's arguments, variables and output, their arrays appended to
    ``values``; Unsupported where the output is not an array."""
    entry = {**entry, "names": names[:len(call_args)], "args": [_encode(a, values) for a in call_args],
             "kwargs": {k: _encode(v, values) for k, v in call_kwargs.items()},
             "variables": {path: _encode(v, values) for path, v in variables.items()},
             "output": _encode(out, values)}
    if "array" not in entry["output"]:
        raise Unsupported("an output that is not an array")
    return entry


JITTED: dict = {}  # (class, attributes, static arguments) -> the part's apply under jax.jit


class PartMissing(NotImplementedError):
    """The graded file has no such class: it builds that part otherwise (under another name, in a module of
    its own), so there is nothing of it to check alone. Never pointed at as the first wrong part."""


def run_part(module, header: dict, arrays) -> object:
    """Apply the graded file's class ``header["cls"]``, built with ``header["fields"]`` (or its method
    ``header["method"]``), to the recorded variables and arguments; what it returns (the worker describes it
    like any entry's result); NotImplementedError where the file has no such method or helper, PartMissing
    where it has no such class. It runs
    under ``jax.jit``, one compilation per class and shapes (the blocks of a stack share one), or eagerly
    where the learner's code does not trace."""
    import jax

    cls = getattr(module, header["cls"], None)
    if header.get("function"):
        if not callable(cls) or isinstance(cls, type):  # its work done elsewhere, as a TODO left unwritten
            raise NotImplementedError(f"your file defines no function named {header['cls']}")
        part = _Function(cls)
    else:
        import flax.linen as nn  # a module class's problem only: a function's worker need not import Flax (0.15 s)

        if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
            raise PartMissing(f"your file defines no Flax module class named {header['cls']}")
        part = cls(**header["fields"])
    method = header.get("method") or "__call__"
    if not callable(getattr(cls, method, None)):  # its work done elsewhere, as a TODO left unwritten
        raise NotImplementedError(f"your {header['cls']} has no method named {method}")
    variables = _nested({path: arrays[v["array"]] for path, v in header["variables"].items()})
    encoded = list(header["args"]) + list(header["kwargs"].values())
    names = list(header["kwargs"])
    values = [arrays[e["array"]] if "array" in e else e["value"] for e in encoded]
    static = tuple(i for i, e in enumerate(encoded) if "array" not in e)

    def apply(variables, *dynamic):
        full = merge(values, static, dynamic)
        positional = full[:len(full) - len(names)]
        return part.apply(variables, *positional, method=method, **dict(zip(names, full[len(positional):])))

    # Everything ``apply`` takes from this call but the arrays: a later call alike in all of it reuses it.
    key = (cls, method, repr(sorted(header["fields"].items())), tuple(names), len(values),
           tuple((i, repr(values[i])) for i in static))
    dynamic = [v for i, v in enumerate(values) if i not in static]
    if key not in JITTED:
        JITTED[key] = jax.jit(apply)
    try:
        return JITTED[key](variables, *dynamic)
    except Exception:  # noqa: BLE001  (code that does not trace runs eagerly: an error then is its own)
        return apply(variables, *dynamic)


class _Function:
    """A helper function of the graded file applied like a part: no variables."""

    def __init__(self, function):
        self.function = function

    def apply(self, variables, *args, method=None, **kwargs):
        return self.function(*args, **kwargs)
