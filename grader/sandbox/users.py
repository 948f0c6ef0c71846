"""The unprivileged user learner code runs as where the grader is root and the kernel refuses the namespaces
(an autograder's container): never root, it cannot signal, trace or read the grader's processes or another
worker's, nor read what only root may read.

A worker then becomes a user of its own (``LEARNER_UIDS[0] + pid``, see :func:`learner_user`) where this user
namespace has those ids, else the unprivileged user ``GRADE_LEARNER_USER`` names (``nobody`` by default),
which the workers then share. What such a worker leaves where any user may write is removed after it
(:func:`remove_owned`), and what it keeps there meanwhile is bounded (:func:`over_temporary_limit`), as a
confined worker's private ``/tmp`` is. What the namespaces would hide is withheld by permissions
(:func:`withhold`).
"""

from __future__ import annotations

import errno
import os
import signal
import stat

LEARNER_USER = "GRADE_LEARNER_USER"  # the user learner code runs as where root grades unconfined
LEARNER_UIDS = 2_000_000_000, 1 << 22  # where a worker's own uid comes from there: the first, how many (pids)
TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm")  # what any user may write in: emptied of a worker's files
TEMPORARY_LIMIT = 256 << 20  # bytes an unconfined worker may keep in TEMPORARY, as a confined one's private /tmp


def over_temporary_limit(uid: int) -> str | None:
    """Why a worker that runs as ``uid`` unconfined must end (it keeps more than :data:`TEMPORARY_LIMIT` in
    the folders any user may write in, which no mount bounds for it there), else None."""
    total = 0
    for entry, info in _left_by(uid):
        if not stat.S_ISDIR(info.st_mode):
            total += info.st_blocks * 512
        else:  # a folder of its own: everything in it
            for path, _, files in os.walk(entry.path):
                for name in files:
                    try:
                        total += os.lstat(os.path.join(path, name)).st_blocks * 512
                    except OSError:
                        pass
        if total > TEMPORARY_LIMIT:
            return (f"it kept more than {TEMPORARY_LIMIT >> 20} MiB in {', '.join(TEMPORARY)} (the limit on temporary "
                    f"files)")
    return None


def _left_by(uid: int, since: float | None = None):
    """``(entry, its lstat)`` of each file and folder ``uid`` owns where any user may write (the folders in
    ``TEMPORARY``, and the folders in them that any user may write in; not what lies in its own folders);
    with ``since``, only those changed since then."""
    def walk(folder: str):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid == uid:
                if since is None or info.st_ctime >= since:
                    yield entry, info
            elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:  # where it could have written too
                yield from walk(entry.path)

    for folder in TEMPORARY:
        yield from walk(folder)


def confined_ids(env: dict) -> tuple[int, int] | None:
    """The user and group learner code runs as where this process is root: a user of its own in namespaces
    (``LEARNER_UIDS[0]``, which no unconfined worker is), or the unprivileged one :func:`learner_user` names;
    None where this process is not root (learner code then stays this process's user). Raises
    :class:`grader.sandbox.isolation.Refused` where it is root and has no unprivileged user to run it as: never
    the host's root."""
    if os.geteuid() != 0:
        return None
    ids = learner_user(env, 0)
    if ids is None:
        from grader.sandbox import isolation

        raise isolation.Refused(errno.EPERM, f"grade runs as root and has no unprivileged user to run learner code as "
                                   f"(name one in {LEARNER_USER})")
    return ids


def learner_user(env: dict, pid: int | None = None) -> tuple[int, int] | None:
    """(uid, gid) an unconfined worker for learner code becomes where this process is root: a user of its
    own, ``LEARNER_UIDS[0] + pid`` (unique while the worker lives: no other worker can signal it or read its
    files), where those ids exist in this user namespace; else the unprivileged user ``env`` names (default
    ``nobody``), which concurrent workers then share. None where this process is not root (the worker stays
    this process's user) or no such user exists."""
    if os.geteuid() != 0:
        return None
    first, count = LEARNER_UIDS
    if pid is not None and _mapped("uid", first, count) and _mapped("gid", first, count):
        return first + pid % count, first + pid % count
    import pwd

    try:
        entry = pwd.getpwnam(env.get(LEARNER_USER) or "nobody")
    except KeyError:
        return None
    if entry.pw_uid == 0 or not (_mapped("uid", entry.pw_uid) and _mapped("gid", entry.pw_gid)):
        return None
    return entry.pw_uid, entry.pw_gid


def own_learner_ids() -> bool:
    """Whether an unconfined worker for learner code gets a user of its own here (see :func:`learner_user`);
    else the workers share one, and a class is graded one submission at a time."""
    first, count = LEARNER_UIDS
    return _mapped("uid", first, count) and _mapped("gid", first, count)


def private_tmp(uid: int) -> str:
    """A new temporary folder for the worker that runs as ``uid``, made here with a name nobody can have
    made first (removed with everything else of that uid by :func:`remove_owned`)."""
    import tempfile

    folder = tempfile.mkdtemp(prefix=f"grade-learner-{uid}-", dir="/tmp")
    os.chown(folder, uid, uid)
    return folder


def withhold(paths) -> None:
    """Where learner code runs unconfined as another user: take every other user's access away from
    ``paths`` (what the namespaces would hide: the solutions, the caches, a class's folders and gradebook,
    the checkout's history), each where it lies (what is below a folder is then out of reach too). Owner's
    and group's access stay as they were."""
    for path in paths:
        try:
            info = os.lstat(path)
            if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o007:
                os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o007)
        except OSError:
            pass


def remove_owned(uid: int, since: float | None = None) -> None:
    """After a worker that ran as ``uid`` (a uid of its own) has ended: end whatever of that uid still runs,
    and remove every file and folder it left where any user may write (the folders in ``TEMPORARY``, and the
    folders in them that any user may write in); with ``since``, only those changed since then (the
    kernel's overflow uid, which a user namespace also shows for every owner it does not map: their files
    are not the learner's)."""
    pid = os.fork()
    if pid == 0:  # kill(-1) as that user reaches exactly its processes
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    import shutil

    for entry, info in list(_left_by(uid, since)):
        try:
            shutil.rmtree(entry.path) if stat.S_ISDIR(info.st_mode) else os.unlink(entry.path)
        except OSError:
            pass


def overflow_uid() -> int:
    """The uid a user namespace shows for an owner it does not map (``nobody``'s, as a rule)."""
    try:
        return int(open("/proc/sys/kernel/overflowuid").read())
    except (OSError, ValueError):
        return 65534


def _mapped(kind: str, number: int, count: int = 1) -> bool:
    """Whether this user namespace has ids ``number`` to ``number + count - 1`` of ``kind`` (a namespace
    made with only root mapped has no other user to become)."""
    try:
        ranges = [line.split() for line in open(f"/proc/self/{kind}_map").read().splitlines()]
    except OSError:
        return True  # no user namespaces here: every id exists
    return any(int(inner) <= number and number + count <= int(inner) + int(size) for inner, _, size in ranges)
