"""What a worker says of an exception raised by the code it runs: its kind, where in the graded file it
was raised, and its traceback as a learner reads it (the learner's own frames, the others counted).

In-process and pure: :func:`describe` is the ``error`` of every error reply (see
:mod:`grader.sandbox.operations`), from the worker that caught the exception.
"""

from __future__ import annotations

import os
import traceback


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


