"""The worker process: the only place where learner code (and reference code) runs.

Started by a monitor (see :mod:`grader.sandbox.monitor`), confined when it runs learner code. It reads requests
from REQ_FD and answers on RESP_FD (see :mod:`grader.sandbox.protocol`); its stdout and stderr are a pipe the
grader drains and truncates. The operations, their requests and their replies are
:mod:`grader.sandbox.operations`'s; each has its handler here, in :data:`HANDLERS`.
"""

from __future__ import annotations

import functools
import os
import resource
import sys
import time
import types

from grader.sandbox import moved, operations, protocol
from grader.sandbox.tracebacks import describe, first_line
from grader.sandbox.trees import merge

STATE: dict = {}  # key -> {"fn", "path", "module", "jitted": {how moved: the entry under jax.jit}, "jit_error",
#                             "moves": whether the problem moves parameters,
#                             "costs": {a program (traced_key): the seconds of its first call, compiling included}}
QUEUED: list = []  # requests that arrived during a batch, answered after it


def serve(req_fd: int, resp_fd: int, cache_dir: str) -> None:
    """Answer requests until told to quit (also the entry of a worker forked by :mod:`grader.sandbox.zygote`)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    import jax
    import numpy  # noqa: F401  (imported before any learner code can patch it)

    from grader.sandbox.config import MATMUL_PRECISION

    jax.config.update("jax_default_matmul_precision", MATMUL_PRECISION)
    if cache_dir:
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    send(resp_fd, {"op": "ready", "ok": True, "backend": jax.default_backend()})
    handlers = dict(HANDLERS, batch=functools.partial(batch, stop=lambda: cancelled(req_fd)))
    while True:
        try:
            header, arrays = QUEUED.pop(0) if QUEUED else protocol.read_message(req_fd, protocol.MAX_REQUEST_HEADER)
        except EOFError:
            os._exit(0)
        op = header["op"]
        replies = handlers[op](header, arrays)
        for reply, payloads in replies if operations.OPERATIONS[op].several else [replies]:
            send(resp_fd, {"op": op, **reply}, payloads)  # (a batch's end says "cancel")


def send(resp_fd: int, header: dict, payloads: list = ()) -> None:
    """Write one reply; where the grader has closed its end (the run ended while this worker was still
    answering: a second process, a cancelled batch), leave quietly: a traceback here would be printed
    output the report shows as the learner's."""
    try:
        protocol.write_message(resp_fd, header, payloads)
    except BrokenPipeError:
        os._exit(0)


def quit(header: dict, arrays) -> None:  # noqa: A001  (the operation's name)
    os._exit(0)


def cancel(header: dict, arrays) -> tuple[dict, list]:
    """A cancel that arrived after the batch it meant to stop had finished."""
    return {"ok": True}, []


def mark(header: dict, arrays) -> tuple[dict, list]:
    """A line in the printed output, after everything printed so far."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os.write(1, str(header.get("text", ""))[:200].encode())
    return {"ok": True}, []


def load(header: dict, arrays) -> tuple[dict, list]:
    path, entry = header["path"], header["entry"]
    if header.get("memory_mib"):  # set before the module's code first runs
        limit = header["memory_mib"] << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    name = f"kata_{header['key']}_{entry}"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    source = arrays[0].tobytes()
    # Tracebacks show the lines from here: the file itself may be one this worker cannot read (a class's
    # private copy, readable by the grader alone).
    import linecache

    text = source.decode("utf-8", "replace")
    linecache.cache[path] = (len(source), None, text.splitlines(keepends=True), path)
    try:
        code = compile(source, path, "exec")
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: BLE001  (learner code may raise anything, SystemExit too)
        return {"ok": False, "error": describe(exc, path, during="import")}, []
    fn = getattr(module, entry, None)
    if not callable(fn):
        found = sorted(k for k, v in vars(module).items() if isinstance(v, types.FunctionType) and v.__module__ == name)
        message = f"{os.path.basename(path)} defines no function named {entry!r}"
        if found:
            message += f" (it defines: {', '.join(found)})"
        return {"ok": False, "error": {"kind": "signature", "type": "AttributeError", "message": message,
                                       "file": path, "line": None, "traceback": ""}}, []
    problem = arity_problem(fn, header.get("arg_names", []))
    if problem:
        return {"ok": False, "error": {"kind": "signature", "type": "TypeError", "message": problem,
                                       "file": path, "line": fn.__code__.co_firstlineno
                                       if hasattr(fn, "__code__") else None, "traceback": ""}}, []
    STATE[header["key"]] = {"fn": fn, "path": path, "module": module, "jitted": {}, "jit_error": None,
                            "moves": bool(header.get("moves")), "costs": {}}
    return {"ok": True}, []


def arity_problem(fn, names: list[str]) -> str | None:
    """Why ``fn`` cannot be called with the problem's positional arguments, or None."""
    import inspect

    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*names)
    except TypeError:
        return (f"{fn.__name__}{signature} cannot be called as "
                f"{fn.__name__}({', '.join(names)}): the signature must take these {len(names)} arguments")
    return None


def decode_args(header: dict, arrays) -> tuple[list, tuple[int, ...]]:
    """The call's arguments (arrays as JAX arrays) and the positions of the static ones."""
    import jax.numpy as jnp
    import numpy as np

    from grader.core import kinds

    values, static = kinds.decode(header["args"], arrays)
    return [jnp.asarray(v) if isinstance(v, np.ndarray) else v for v in values], static


def jitted(state: dict, static: tuple[int, ...], which):
    """The entry under ``jax.jit`` with its parameters moved as ``which`` says. Moving all of them or none
    is one program, the move's weight (1 or 0) a traced argument: a fixed example and a drawn input alike in
    static arguments and shapes share a trace. Moving some (diagnosis only) is a program of its own."""
    import jax
    import numpy as np

    if not state["moves"]:  # a problem without parameters: the entry itself (Flax is not even imported)
        if "plain" not in state["jitted"]:
            state["jitted"]["plain"] = jax.jit(state["fn"], static_argnums=static)
        return state["jitted"]["plain"]
    key = "all or none" if isinstance(which, bool) else tuple(which)
    if key not in state["jitted"]:
        fn = state["fn"]
        if isinstance(which, bool):
            def entry(weight, *args):
                with moved.moving(True, weight):
                    return fn(*args)

            state["jitted"][key] = jax.jit(entry, static_argnums=tuple(i + 1 for i in static))
        else:
            def entry(*args):
                with moved.moving(which):
                    return fn(*args)

            state["jitted"][key] = jax.jit(entry, static_argnums=static)
    compiled = state["jitted"][key]
    if isinstance(which, bool):
        weight = np.float32(1.0 if which else 0.0)
        return lambda *args: compiled(weight, *args)
    return compiled


def traced_key(args: list, static: tuple[int, ...], which) -> tuple:
    """What one program of :func:`jitted` serves: the static arguments, the arrays' shapes and dtypes, and
    how the parameters are moved (all or none being one program)."""
    import numpy as np

    arrays = [a for i, a in enumerate(args) if i not in static]
    return (tuple(repr(args[i]) for i in static),
            tuple((np.shape(a), str(getattr(a, "dtype", type(a).__name__))) for a in arrays),
            "all or none" if isinstance(which, bool) else tuple(which))


def call(header: dict, arrays) -> tuple[dict, list]:
    import jax

    state = STATE[header["key"]]
    fn, path = state["fn"], state["path"]
    args, static = decode_args(header, arrays)
    which = header.get("moved", False)
    jit_used = False
    start = time.perf_counter()
    try:
        out = None
        if header.get("jit") and state["jit_error"] is None:
            try:
                out = jax.block_until_ready(jitted(state, static, which)(*args))
                jit_used = True
                state["costs"].setdefault(traced_key(args, static, which), time.perf_counter() - start)
            except NotImplementedError:
                raise
            except Exception as exc:  # noqa: BLE001  (any failure to trace falls back to eager)
                state["jit_error"] = f"{type(exc).__name__}: {first_line(exc)}"
        if not jit_used:
            with moved.moving(which):
                out = fn(*args)
            if isinstance(out, jax.Array):
                out = jax.block_until_ready(out)
        reply, payloads = result_message(out, header.get("max_bytes", 0))
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": describe(exc, path, during="call")}, []
    reply.update(ok=True, seconds=time.perf_counter() - start,
                 jit={"used": jit_used, "error": state["jit_error"]})
    return reply, payloads


BATCH_BELOW_SECONDS = 0.3  # trace calls together only when one call costs less than this


def cancelled(req_fd: int) -> bool:
    """Whether the grader has asked to stop the batch under way (it sends nothing else meanwhile)."""
    import select

    if not select.select([req_fd], [], [], 0)[0]:
        return False
    header, arrays = protocol.read_message(req_fd, protocol.MAX_REQUEST_HEADER)
    if header.get("op") == "cancel":
        return True
    QUEUED.append((header, arrays))
    return False


def batch(header: dict, arrays, stop=lambda: False):
    """Answer several calls, one reply each, in order.

    The first call runs on its own. If its program was cheap to compile (a small function, whose cost is
    mostly XLA's fixed cost per compilation), the others are traced into one program and compiled once,
    which costs far less than a compilation each; tracing a large model that way grows faster than
    linearly, so expensive calls stay one by one. What a program cost is what its first call here took:
    a first call whose program this worker compiled earlier (a later batch of the same run) takes
    milliseconds and says nothing of the others'. If tracing them together fails for any reason, each
    call runs on its own (and a call that raises gets its own error reply).
    """
    import jax

    state = STATE[header["key"]]
    calls = header["calls"]
    if not calls:
        return
    first, payloads = call(dict(calls[0], key=header["key"], jit=header.get("jit")), arrays)
    yield first, payloads
    calls = calls[1:]
    if stop():
        yield {"op": "cancel", "ok": True}, []
        return
    outs = None
    first_args, first_static = decode_args(header["calls"][0], arrays)
    cost = state["costs"].get(traced_key(first_args, first_static, header["calls"][0].get("moved", False)),
                              first.get("seconds", 0.0))
    cheap = first.get("ok") and first.get("jit", {}).get("used") and cost < BATCH_BELOW_SECONDS
    if cheap and len(calls) > 1:
        decoded = [decode_args(c, arrays) for c in calls]
        dynamic = [[a for i, a in enumerate(args) if i not in static] for args, static in decoded]

        entries = [jitted(state, static, c.get("moved", False)) for c, (_, static) in zip(calls, decoded)]

        def together(dynamic):  # through the jitted entry: calls alike in static arguments and shapes share a trace
            return [entry(*merge(args, static, dyn)) for entry, (args, static), dyn in zip(entries, decoded, dynamic)]

        start = time.perf_counter()
        try:
            outs = jax.block_until_ready(jax.jit(together)(dynamic))
        except BaseException:  # noqa: BLE001  (any failure: the calls run one by one below)
            outs = None
        seconds = (time.perf_counter() - start) / len(calls)
    for i, one in enumerate(calls):
        if outs is None:
            if i and stop():
                yield {"op": "cancel", "ok": True}, []
                return
            yield call(dict(one, key=header["key"], jit=header.get("jit")), arrays)
            continue
        try:
            reply, payloads = result_message(outs[i], one.get("max_bytes", 0))
        except BaseException as exc:  # noqa: BLE001
            yield {"ok": False, "error": describe(exc, state["path"], during="call")}, []
            continue
        reply.update(ok=True, seconds=seconds, together=True, jit={"used": True, "error": None})
        yield reply, payloads


def result_message(out, max_bytes: int) -> tuple[dict, list]:
    """Describe what the entry returned; an array travels as raw bytes in its own dtype, unless it is
    larger than ``max_bytes`` (then only its description does: the grader has no use for the bytes)."""
    import jax
    import numpy as np

    if isinstance(out, jax.Array):
        try:
            out = np.asarray(out)
        except Exception:  # noqa: BLE001  (e.g. typed PRNG key arrays)
            return {"result": {"type": "jax.Array", "dtype": str(out.dtype)}}, []
    if not isinstance(out, np.ndarray):
        return {"result": {"type": type(out).__module__ + "." + type(out).__qualname__
                           if type(out).__module__ != "builtins" else type(out).__qualname__}}, []
    if type(out) is not np.ndarray:
        out = out.view(np.ndarray)  # a subclass's overrides must not reach the grader
    if out.dtype.hasobject or out.dtype.fields is not None:
        return {"result": {"type": "numpy.ndarray", "dtype": str(out.dtype)}}, []
    result = {"type": "array", "dtype": out.dtype.name, "shape": list(out.shape)}
    if out.nbytes > max_bytes:
        return {"result": dict(result, omitted=True)}, []
    specs, payloads = protocol.pack_arrays([out])
    return {"result": result, "arrays": specs}, payloads


def params(header: dict, arrays) -> tuple[dict, list]:
    """The parameters the entry creates for these arguments, as Flax makes them (:mod:`grader.sandbox.moved`):
    their paths and shapes, found by tracing without computing (eagerly where the entry does not trace:
    NumPy beside a module that only declares the parameters); with ``values``, their initial values too,
    as arrays. ``params`` is None where the entry creates none that Flax makes.

    In a learner's worker, what this answers is that worker's word, nothing more: the grader checks it
    against the outputs before it says anything from it (:mod:`grader.grading.engine`). A tree whose
    leaves have no shape of whole numbers is an error reply, not a crash of the worker."""
    import jax
    import numpy as np

    state = STATE[header["key"]]
    args, static = decode_args(header, arrays)
    dynamic = [a for i, a in enumerate(args) if i not in static]

    def found(*dyn):
        return moved.observe(lambda: state["fn"](*merge(args, static, dyn)))

    traced = (lambda: jax.jit(found)(*dynamic)) if header.get("values") else (lambda: jax.eval_shape(found, *dynamic))
    tree, raised = None, None
    for attempt in (traced, lambda: found(*dynamic)):
        try:
            tree, raised = attempt(), None
        except BaseException as exc:  # noqa: BLE001  (the call itself is graded elsewhere)
            tree, raised = None, exc
        if tree:
            break
    if raised is not None:  # it never ran through: whether it makes parameters was not seen
        return {"ok": False, "error": describe(raised, state["path"], during="call")}, []
    if not tree:
        return {"ok": True, "params": None}, []
    try:
        shapes = {str(path): [int(d) for d in np.shape(leaf)] for path, leaf in tree.items()}
        paths = sorted(shapes)
        leaves = [np.asarray(tree[path]) for path in paths] if header.get("values") else []
    except Exception as exc:  # noqa: BLE001  (something other than Flax's parameters came back)
        return {"ok": False, "error": describe(exc, state["path"], during="call")}, []
    if not header.get("values"):
        return {"ok": True, "params": shapes}, []
    specs, payloads = protocol.pack_arrays(leaves)
    return {"ok": True, "params": shapes, "paths": paths, "arrays": specs}, payloads


def substitute(header: dict, arrays) -> tuple[dict, list]:
    """The entry's output where each parameter it creates takes the given value in place of its initial one
    (``paths``, one per the request's last arrays), eagerly (the values are constants of this one call),
    answered like a call (``max_bytes`` its bound): the grader runs the reference so on the initial values a
    learner's worker reports, to see whether they give that worker's outputs."""
    import jax

    state = STATE[header["key"]]
    args, _ = decode_args(header, arrays)
    paths = list(header["paths"])
    values = dict(zip(paths, arrays[len(arrays) - len(paths):])) if paths else {}
    start = time.perf_counter()
    try:
        with moved.substituting(values):
            out = state["fn"](*args)
        if isinstance(out, jax.Array):
            out = jax.block_until_ready(out)
        reply, payloads = result_message(out, header.get("max_bytes", 0))
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": describe(exc, state["path"], during="call")}, []
    reply.update(ok=True, seconds=time.perf_counter() - start, jit={"used": False, "error": None})
    return reply, payloads


def capture(header: dict, arrays) -> tuple[dict, list]:
    from grader.sandbox import intercept

    args, _ = decode_args(header, arrays)
    try:
        return intercept.capture(STATE[header["key"]]["fn"], args, header["classes"], header.get("moved", False),
                                 header.get("functions", []), header.get("methods", []))
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": describe(exc, STATE[header["key"]]["path"], during="call")}, []


def part(header: dict, arrays) -> tuple[dict, list]:
    from grader.sandbox import intercept

    state = STATE[header["key"]]
    start = time.perf_counter()
    try:
        reply, payloads = result_message(intercept.run_part(state["module"], header, arrays),
                                         header.get("max_bytes", 0))
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": describe(exc, state["path"], during="call")}, []
    reply.update(ok=True, seconds=time.perf_counter() - start, jit={"used": False, "error": None})
    return reply, payloads


HANDLERS = {"load": load, "call": call, "batch": batch, "params": params, "substitute": substitute,
            "capture": capture, "part": part, "mark": mark, "cancel": cancel, "quit": quit}
