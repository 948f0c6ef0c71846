"""The worker process: the only place where learner code (and reference code) runs.

Started by a monitor (see :mod:`grader.sandbox.pool`), confined when it runs learner code. It reads requests
from REQ_FD and answers on RESP_FD (see :mod:`grader.sandbox.protocol`); its stdout and stderr are a pipe the
grader drains and truncates. Requests:

- ``{"op": "load", "key", "path", "entry", "memory_mib", "moves"}`` with the module's source as one uint8
  array: compile it as the module at ``path`` and keep its ``entry`` function under ``key``; with
  ``memory_mib``, first limit the address space to that many MiB; ``moves``: the problem's calls may
  move the parameters (:mod:`grader.sandbox.moved`).
- ``{"op": "call", "key", "args": [...], "jit": bool, "moved": bool | [path, ...], "max_bytes": int}``: call
  the entry with its parameters moved as ``moved`` says, under
  ``jax.jit`` with its static arguments static when asked and when it traces, otherwise eagerly; an
  array larger than ``max_bytes`` is described but not sent.
- ``{"op": "batch", "key", "calls": [{"args", "max_bytes"}, ...], "jit": bool}``: several calls, one
  reply each; ``{"op": "cancel"}`` stops it.
- ``{"op": "params", "key", "args": [...], "values"?: true}``: the Flax parameter tree (paths and shapes)
  the entry creates for these arguments, found by tracing without computing; with ``values``, their
  initial values too.
- ``{"op": "capture", "key", "args": [...], "classes": [...], "methods": [...], "functions": [...]}``: the
  entry's calls of those module classes, their methods and helper functions, recorded (trusted modules only;
  see :mod:`grader.sandbox.intercept`).
- ``{"op": "part", "key", "cls", "method", "function", "fields", "args", "kwargs", "variables", "max_bytes"}``:
  one module class (or one of its methods, or, with ``function``, one helper function) of the file applied
  alone to recorded variables and arguments; answered like a call.
- ``{"op": "mark", "text"}``: write ``text`` to the printed output after all printed so far; the grader
  finds where its later requests' output begins (a replay shows only its own case's).
- ``{"op": "quit"}``.
"""

from __future__ import annotations

import os
import resource
import sys
import time
import traceback
import types

from grader.sandbox import moved, protocol
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
    protocol.write_message(resp_fd, {"op": "ready", "backend": jax.default_backend()})

    while True:
        try:
            header, arrays = QUEUED.pop(0) if QUEUED else protocol.read_message(req_fd, protocol.MAX_REQUEST_HEADER)
        except EOFError:
            os._exit(0)
        op = header.get("op")
        if op == "quit":
            os._exit(0)
        if op == "cancel":  # arrived after the batch it meant to stop had finished
            protocol.write_message(resp_fd, {"op": "cancelled"})
            continue
        if op == "mark":  # a line in the printed output, after everything printed so far
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os.write(1, str(header.get("text", ""))[:200].encode())
            protocol.write_message(resp_fd, {"op": "marked"})
            continue
        if op == "batch":
            for reply, payloads in batch(header, arrays, lambda: cancelled(req_fd)):
                protocol.write_message(resp_fd, reply, payloads)
            continue
        handler = {"load": load, "call": call, "params": params, "capture": capture, "part": part}[op]
        reply, payloads = handler(header, arrays)
        protocol.write_message(resp_fd, reply, payloads)


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
        yield {"op": "cancelled"}, []
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
                yield {"op": "cancelled"}, []
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

    With ``"substitute": [path, ...]`` (the request's last arrays, one per path), the entry's output where
    each parameter it creates takes the given value in place of its initial one, answered like a call
    (``max_bytes`` its bound): the grader runs the reference so on the initial values a learner's worker
    reports, to see whether they give that worker's outputs.

    In a learner's worker, what this answers is that worker's word, nothing more: the grader checks it
    against the outputs before it says anything from it (:mod:`grader.grading.engine`). A tree whose
    leaves have no shape of whole numbers is an error reply, not a crash of the worker."""
    import jax
    import numpy as np

    state = STATE[header["key"]]
    args, static = decode_args(header, arrays)
    if header.get("substitute") is not None:  # eagerly: the values are constants of this one call
        paths = list(header["substitute"])
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


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def describe(exc: BaseException, path: str, during: str) -> dict:
    """A JSON description of an exception, pointing at the innermost line of the graded file."""
    kind = "exception"
    from grader.sandbox.intercept import PartMissing

    if isinstance(exc, PartMissing):  # a part the file builds otherwise: nothing of it to check alone
        kind = "missing"
    elif isinstance(exc, NotImplementedError):
        kind = "not_implemented"
    elif isinstance(exc, MemoryError) or "RESOURCE_EXHAUSTED" in str(exc) or "Out of memory" in str(exc):
        kind = "memory"
    elif isinstance(exc, SystemExit):
        kind = "exit"
    elif isinstance(exc, TypeError) and during == "call" and _is_arity_error(exc, path):
        kind = "signature"
    file, line = path, None
    if isinstance(exc, SyntaxError) and exc.filename == path:
        line = exc.lineno
    tb = exc.__traceback__
    real = os.path.realpath(path)
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == real:
            line = tb.tb_lineno
        tb = tb.tb_next
    # A SyntaxError's own text ends in its location, which the report gives beside the message already.
    message = exc.msg if isinstance(exc, SyntaxError) and exc.msg else first_line(exc)
    return {"kind": kind, "type": type(exc).__name__, "message": message or type(exc).__name__,
            "file": file, "line": line, "during": during, "traceback": learner_traceback(exc, path)}


TRACEBACK_LINES, TRACEBACK_CHARS, MESSAGE_LINES = 60, 7000, 12  # (the protocol keeps 8192 characters of a string)
GRADER_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the grader package, every subpackage


def learner_traceback(exc: BaseException, path: str) -> str:
    """The traceback as a learner reads it: for each exception of the chain (causes and contexts, oldest
    first, as Python prints them) the frames in the graded file ``path`` with their lines, each run of
    other frames between them counted on one line, then the exception line. Where no frame is in
    ``path`` (a SyntaxError, a failure in the grader's wiring), the last exception as Python prints it.
    The grader's leading frames and JAX's note about its filtered frames go. At most 60 lines and about
    7000 characters: earlier messages shrink first, then frames go from the middle; the last exception
    line always stays."""
    import functools

    chain = _exception_chain(exc)
    stacks = []
    for e in chain:
        stack = traceback.extract_tb(e.__traceback__)
        while stack and os.path.abspath(stack[0].filename).startswith(GRADER_FOLDER + os.sep):
            stack.pop(0)
        stacks.append(stack)
    real = os.path.realpath(path)
    resolved = functools.cache(os.path.realpath)  # a recursion has a thousand frames of one file
    mine = lambda frame: resolved(frame.filename) == real  # noqa: E731
    found = any(mine(frame) for stack in stacks for frame in stack)
    if found:  # the frames that called the learner's code (the grader's, a transform's) say nothing
        stacks = [stack[next((i for i, frame in enumerate(stack) if mine(frame)), 0):] for stack in stacks]
    else:
        chain, stacks, mine = chain[-1:], stacks[-1:], lambda frame: True  # noqa: E731

    def pieces(short: bool) -> list[list[str]]:
        out = []
        for i, (e, stack) in enumerate(zip(chain, stacks)):
            if i:
                link = ("The above exception was the direct cause of the following exception:"
                        if e.__cause__ is chain[i - 1]
                        else "During handling of the above exception, another exception occurred:")
                out.append(["", link, ""])
            if stack:
                out += [["Traceback (most recent call last):"], *_frame_pieces(stack, mine)]
            out.append(_exception_lines(e, short and i < len(chain) - 1))
        return out

    parts = pieces(short=False)
    if sum(map(len, parts)) > TRACEBACK_LINES:
        parts = _middle_left_out(pieces(short=True), TRACEBACK_LINES, found)
    lines = [line for part in parts for line in part]
    if sum(map(len, lines)) > TRACEBACK_CHARS:
        width = TRACEBACK_CHARS // len(lines)
        lines = [line if len(line) <= width else line[:width - 6] + " [...]" for line in lines]
    return "\n".join(lines)


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes and contexts, oldest first, as Python prints them."""
    chain, seen, e = [], set(), exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        chain.insert(0, e)
        e = e.__cause__ if e.__cause__ is not None else (None if e.__suppress_context__ else e.__context__)
    return chain


def _owner(filename: str) -> str:
    """Whose code a left-out frame runs: a package, Python, the grader, or a file's name."""
    parts = filename.split(os.sep)
    for folder in ("site-packages", "dist-packages"):
        if folder in parts[:-1]:
            return parts[parts.index(folder) + 1].removesuffix(".py")
    if filename.startswith(("<", os.path.dirname(os.__file__))):
        return "Python"
    return "the grader" if os.path.abspath(filename).startswith(GRADER_FOLDER + os.sep) else os.path.basename(filename)


def _frame_pieces(stack, keep) -> list[list[str]]:
    """One piece per kept frame (a recursion's repeats counted as Python does), one per run of others."""
    printer = traceback.StackSummary()
    pieces, others, last, repeats = [], [], None, 0

    def flush() -> None:
        nonlocal others, repeats
        if repeats > 2:
            times = repeats - 2
            pieces.append([f"  [Previous line repeated {times} more time{'s' if times > 1 else ''}]"])
        if others:
            names = list(dict.fromkeys(map(_owner, others)))
            where = "/".join(names[:3]) + ("/..." if len(names) > 3 else "")
            pieces.append([f"  ... {len(others)} frame{'s' if len(others) > 1 else ''} in {where} left out ..."])
        others, repeats = [], 0

    for frame in stack:
        if not keep(frame):
            if repeats > 2:
                flush()
            others.append(frame.filename)
            last = None
            continue
        key = (frame.filename, frame.lineno, frame.name)
        if key == last:
            repeats += 1
            if repeats > 2:
                continue
        else:
            flush()
        last = key
        pieces.append(printer.format_frame_summary(frame).rstrip("\n").split("\n"))
    flush()
    return pieces


def _exception_lines(e: BaseException, short: bool) -> list[str]:
    """The exception's lines as Python prints them, a long message cut; ``short``: up to its own line."""
    lines = [line for line in "".join(traceback.format_exception_only(type(e), e)).splitlines()
             if line != "-" * 20 and "JAX has removed its internal frames" not in line]
    if short:  # up to the exception's own line (a SyntaxError's location comes before it)
        return lines[:next((i + 1 for i, line in enumerate(lines) if not line.startswith(" ")), len(lines))]
    if len(lines) > MESSAGE_LINES:
        left_out = len(lines) - MESSAGE_LINES + 1
        lines = lines[:MESSAGE_LINES - 1] + [f"  ... {left_out} more lines of the message ..."]
    return lines


def _middle_left_out(parts: list[list[str]], limit: int, found: bool) -> list[list[str]]:
    """``parts`` within ``limit`` lines, whole pieces going from the middle: the learner's outermost calls
    stay (where ``found``, a frame of the learner's is among them), and the pieces nearest the error."""
    if sum(map(len, parts)) <= limit:
        return parts
    head = limit // 3 if found else 1
    first, used = 0, 0
    while first < len(parts) and used + len(parts[first]) <= head:
        used += len(parts[first])
        first += 1
    last, room = len(parts), limit - used - 1
    while last > first and len(parts[last - 1]) <= room:
        room -= len(parts[last - 1])
        last -= 1
    left_out = sum(map(len, parts[first:last]))
    return parts[:first] + [[f"  ... {left_out} lines left out ..."]] + parts[last:]


def _is_arity_error(exc: TypeError, path: str) -> bool:
    """A TypeError raised by the call itself (wrong number of parameters), not inside the function."""
    tb = exc.__traceback__
    real = os.path.realpath(path)
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == real:
            return False
        tb = tb.tb_next
    return "argument" in str(exc)


