"""The two mistakes a command can meet before any code runs, and how their sentences quote what was wrong.

A ProblemError is the instructor's: a problem folder missing or malformed. A UsageError is the command
line's: it names something that does not exist. Either is one sentence that `grade` prints before it exits
2, never a traceback; the helpers below keep what such a sentence quotes (a value, a path, what an
instructor's module raised) short and on one line.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from grader.core.cut import cut


class ProblemError(Exception):
    """A problem folder is missing or malformed (the instructor's mistake, not the learner's)."""


class UsageError(Exception):
    """The command line names something that does not exist."""


def one_line(text: str, limit: int = 200) -> str:
    """The first line of ``text`` that holds anything, cut to ``limit`` characters."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return cut(first, limit)


def shown(value) -> str:
    """A value as a message quotes it: its repr, on one line, short."""
    return one_line(repr(value), 60)


def shown_path(path: Path, root: Path) -> str:
    """``path`` relative to the checkout ``root`` where it lies inside it, else as given."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def describe(exc: BaseException, path: Path | None = None) -> str:
    """``ValueError at line 7: the message's first line``, the line being the last one in ``path``
    the exception passed through (a SyntaxError's message names its own line)."""
    line = ""
    if path is not None and not isinstance(exc, SyntaxError):
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        line = f" at line {lines[-1]}" if lines else ""
    text = one_line(str(exc))
    return f"{type(exc).__name__}{line}: {text}" if text else f"{type(exc).__name__}{line}"
