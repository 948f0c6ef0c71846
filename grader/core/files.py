"""Files the grader writes: each replaces the old one at once, through a temporary file of its own."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path


def write_json(path: Path, data) -> None:
    write_text(path, json.dumps(data, indent=1))


def write_text(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` atomically: a reader sees the old file or the new one, never half."""
    with atomic(path) as f:
        f.write(text)


UMASK = os.umask(0o022)
os.umask(UMASK)


@contextlib.contextmanager
def atomic(path: Path, binary: bool = False):
    """A file whose contents replace ``path`` at once when the block ends without an error. It is written
    as a temporary file of a random name, created exclusively beside ``path``, so no link left at a name
    the grader would use can redirect the write; the rename replaces a link at ``path`` itself, never the
    file it points to."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~UMASK)  # as a file made the ordinary way would be
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
