"""A class's submissions read as submissions: untrusted files, copied out before anything grades them.

`grade batch` and the Gradescope autograder never grade a student's file where it lies. Each one is read
here, by the grader, with no symbolic link on its way (the file or any folder between the class folder
and it), as one regular file of at most :data:`MAX_BYTES` that no other name shares (no hard link), and
written into a folder of its own, which is all of the class that its grading can see: the class folder,
the gradebook and the verdicts are hidden from learner code (:func:`hidden_with`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_BYTES = 2 << 20  # a submitted module larger than this is refused unread
HIDE_VARIABLE = "GRADE_HIDE"  # more paths learner code must not read, os.pathsep between them


class Refused(ValueError):
    """A submitted file that is not read, and the sentence that says why."""


def shown(path: Path | str) -> str:
    """A path as a report may print it, whatever bytes its name holds."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def read(path: Path, within: Path) -> bytes:
    """The bytes of the submitted file ``path``, which lies in ``within``: refused with a sentence where a
    symbolic link is on the way, where it is not one regular file, or where it is too large."""
    path = Path(os.path.abspath(path))
    within = Path(os.path.abspath(within))
    try:
        steps = path.relative_to(within).parts
    except ValueError:
        raise Refused(f"{shown(path)} does not lie in {shown(within)}") from None
    here = within
    for part in steps:
        here = here / part
        try:
            info = os.lstat(here)
        except OSError as exc:
            raise Refused(f"{shown(here)} cannot be read: {exc.strerror}") from None
        if stat.S_ISLNK(info.st_mode):
            raise Refused(f"{shown(here)} is a symbolic link: submit the file itself, not a link to one")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise Refused(f"{shown(path)} cannot be read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{shown(path)} is not a regular file")
        if info.st_nlink > 1:
            raise Refused(f"{shown(path)} is a hard link to another file: submit the file itself")
        if info.st_size > MAX_BYTES:
            raise Refused(f"{shown(path)} has {info.st_size} bytes, more than the {MAX_BYTES} a submission may have")
        data = b""
        while len(data) <= MAX_BYTES:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
        if len(data) > MAX_BYTES:
            raise Refused(f"{shown(path)} grew past the {MAX_BYTES} bytes a submission may have while it was read")
        return data
    finally:
        os.close(fd)


def private_copy(path: Path, within: Path, folder: Path, name: str) -> Path:
    """The submitted file ``path`` (in ``within``), read as :func:`read` reads it, written as ``folder/name``
    (a folder made here, that nothing else writes): the file to grade. Only the grader's user can read it
    (learner code gets its source from the grader, never from the file: a classmate's code, running as
    another user, cannot read it either)."""
    data = read(path, within)
    folder.mkdir(mode=0o700)
    copy = folder / name
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return copy


def hidden_with(env: dict, paths: list[Path]) -> dict:
    """``env`` for a `grade` command whose learner code must not read ``paths`` either."""
    kept = [p for p in env.get(HIDE_VARIABLE, "").split(os.pathsep) if p]
    return dict(env, **{HIDE_VARIABLE: os.pathsep.join(kept + [os.path.abspath(p) for p in paths])})


def hidden_by_environment() -> list[str]:
    """What the command that started this one says learner code must not read (see :func:`hidden_with`)."""
    return [p for p in os.environ.get(HIDE_VARIABLE, "").split(os.pathsep) if os.path.isabs(p)]
