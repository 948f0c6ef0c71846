"""Every command's exit statuses, and the one way a command says that what it was asked is wrong."""

from __future__ import annotations

import sys
from enum import IntEnum


class Exit(IntEnum):
    OK = 0  # a pass; a command that did what it was asked
    FAILED = 1  # a verdict other than a pass; a check that failed; a command that refused (a solution too soon)
    USAGE = 2  # a wrong command line, no checkout, a broken problem: nothing was graded
    INTERRUPTED = 130  # 128 + SIGINT: stopped by Ctrl-C (a batch stopped by another signal: 128 + its number)


def usage_error(message: str, *, program: str = "grade", code: int = Exit.USAGE) -> int:
    """Say ``message`` on stderr as ``program: message``; the exit status to return (USAGE by default)."""
    print(f"{program}: {message}", file=sys.stderr)
    return code
