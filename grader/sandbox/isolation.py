"""Confining learner code with the kernel's namespaces (Linux), through plain system calls.

A worker that runs learner code is started in two steps (see :mod:`grader.sandbox.pool`):

1. Its monitor, a process of the grader's, calls :func:`confine`: new user, mount, network, IPC and PID
   namespaces, in which no further user namespace may be made; the whole filesystem seen read-only,
   except a private ``/tmp`` and ``/dev/shm`` (tmpfs) and the folders given as ``writable``; no network
   but an unconnected loopback. Where the grader is root, the namespace also maps an unprivileged user
   (``ids``), which the worker becomes for good in :func:`enter`: learner code is never the host's root,
   nor the owner of anything outside its view.
2. It forks the worker, which is then process 1 of a PID namespace of its own, and which calls
   :func:`enter` before anything else: a ``/proc`` of that namespace (so no other process can be seen,
   signalled or opened through ``/proc``) whose ``/proc/sys`` is read-only, limits on processes and file
   size, no capabilities, no new privileges. When the worker ends, for whatever reason, the kernel ends
   every process it started, ``setsid`` or not.

Where the kernel refuses any of it (macOS, a container without user namespaces, a distribution that
restricts them), :func:`probe` says why, and learner code runs without isolation: the verdict says so.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import sys

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
CLONE_NEWNET, CLONE_NEWIPC = 0x40000000, 0x08000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWPID  # what confine() makes
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 0x1000, 0x2000, 0x4000, 0x40000
MOUNT_ATTR_RDONLY, AT_RECURSIVE, AT_FDCWD = 0x1, 0x8000, -100
SYS_MOUNT_SETATTR = 442  # the same number on every architecture (added after the tables were unified)
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
LINUX_CAPABILITY_VERSION_3 = 0x20080522

PROCESS_LIMIT = 1024  # tasks (threads count) in the worker's namespace: JAX starts a few dozen threads
FILE_SIZE_LIMIT = 256 << 20  # bytes, for any one file the worker writes
TMPFS_OPTIONS = b"size=256m,mode=1777"
HIDING_OPTIONS = b"size=64k,mode=0555"  # an empty folder in place of a hidden one


class Refused(OSError):
    """The kernel refused a step of the confinement."""


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    """Raise Refused for a failed call (``result`` not 0; a positive one is the errno itself)."""
    if result != 0:
        code = result if result > 0 else ctypes.get_errno()
        raise Refused(code, f"{what}: {os.strerror(code)}")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as exc:
        raise Refused(exc.errno or errno.EPERM, f"writing {path}: {exc.strerror}") from None


STAGING = ("/tmp", "/mnt", "/media", "/srv", "/var/tmp", "/run", "/home")
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys", "/dev")


PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the grader's own


def import_path() -> list[str]:
    """The import path a worker gets, in order: this interpreter's, without the current folder, the
    script's folder, PYTHONPATH's folders, or a kata checkout the grader's package lies in (nor a folder
    above one, nor one inside it but a virtual environment's). What is left is the standard library and
    the installed packages; the grader's package is seen by itself (:func:`allowed`), and what a worker
    imports of it it finds there."""
    around = os.path.dirname(PACKAGE)
    checkout = os.path.isdir(os.path.join(around, "problems"))
    prefixes = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    dropped = {"", os.getcwd()}
    if not sys.flags.safe_path and sys.path:
        dropped.add(os.path.abspath(sys.path[0]))  # the script's (or the current) folder
    if not sys.flags.ignore_environment:
        dropped.update(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    kept = []
    for entry in sys.path:
        real = os.path.abspath(entry) if entry else ""
        inside = real.startswith(around + os.sep) and not any(real == p or real.startswith(p + os.sep) for p in prefixes)
        if entry in dropped or real in dropped or (checkout and (real == around or around.startswith(real + os.sep)
                                                                  or inside)):
            continue
        if real not in kept:
            kept.append(real)
    return kept


def allowed(visible=(), writable=(), path=()) -> tuple[dict[str, bool], dict[str, str]]:
    """What a confined worker sees, by real path, and whether it may write there: the system's folders, the
    interpreter with its libraries and the import path ``path`` (:func:`import_path`), the grader's own
    package, what ``visible`` names (read-only) and what ``writable`` names. Nothing else: no checkout
    around the grader (its solutions, its history), no home folder, no class folder beside the graded
    file. Second, the paths through a link among them (a virtual environment reached through one), each
    with the real folder it stands for."""
    wanted, aliases = {}, {}
    for folder, rw in [*((f, False) for f in (*SYSTEM, sys.prefix, sys.base_prefix, sys.exec_prefix, *path,
                                               PACKAGE, *visible)), *((f, True) for f in writable)]:
        if folder and os.path.isdir(folder) and os.path.realpath(folder) != "/":
            real = os.path.realpath(folder)
            wanted[real] = wanted.get(real, False) or rw
            if os.path.abspath(folder) != real:
                aliases[os.path.abspath(folder)] = real
    # A read-only folder inside another read-only one comes with it.
    kept = {f: rw for f, rw in wanted.items()
            if rw or not any(f.startswith(o + "/") and not wanted[o] for o in wanted if o != f)}
    return kept, aliases


def confine(writable: list[str] = (), visible: list[str] = (), hidden: list[str] = (), workdir: str = "",
            ids: tuple[int, int] | None = None, path: list[str] = ()) -> None:
    """In the monitor, before it forks the worker: the namespaces and the view from an allow-list. Without
    ``ids`` the caller's user and group stay what they are (mapped to themselves: an ordinary user's own
    machine); with ``ids`` (where the caller is root) the namespace also has that unprivileged user and
    group, mapped from outside it by a process that stays there, which the worker becomes for good
    (:func:`enter`): what learner code is, seen from the host, is that user and nothing more. (The monitor
    stays root within the namespace while it builds the view: root's own folders on the way, such as an
    interpreter under /root, must be passable.) No user namespace can be made inside. The worker's root is a
    new one in which only :func:`allowed` folders exist (``writable`` ones writable, the rest read-only), with
    a private ``/tmp`` and ``/dev/shm`` (tmpfs) and an empty ``workdir`` where it starts. What ``hidden``
    names inside those (a problem's recorded answers, a class's folders where they lie beside the graded
    file) is covered, a folder by an empty one, a file by an empty file; a visible or writable folder
    inside a hidden one stays visible. Raises Refused. (One function of 100 lines: each step depends on
    the order of the ones before it, the mounts built over what is held open, so it reads top to bottom in
    one place.)"""
    if not sys.platform.startswith("linux"):
        raise Refused(errno.ENOSYS, "namespaces exist only on Linux")
    libc = _libc()
    if ids is not None:
        os.setgroups([])  # root's own groups must not come along
        mapper = _Mapper(*ids)
        made = libc.unshare(NAMESPACES)
        code = ctypes.get_errno()
        mapper.map(made == 0)
        _check(made and code, "unshare")
    else:
        uid, gid = os.getuid(), os.getgid()
        _check(libc.unshare(NAMESPACES), "unshare")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _write("/proc/sys/user/max_user_namespaces", "0")  # in this namespace and below: none nested
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")
    wanted, aliases = allowed(visible, writable, path)
    hide = sorted({os.path.realpath(h) for h in hidden if os.path.exists(h)})
    # Held open while the new root is built over /tmp, where some of them may lie.
    held = [(folder, os.open(folder, os.O_PATH | os.O_DIRECTORY), wanted[folder]) for folder in sorted(wanted)]
    linked = [(alias, os.open(real, os.O_PATH | os.O_DIRECTORY), wanted.get(real, False))
              for alias, real in sorted(aliases.items())]
    links = {f"/{name}": os.readlink(f"/{name}") for name in os.listdir("/") if os.path.islink(f"/{name}")}
    # The new root is built on a folder no bound one contains (a recursive bind would carry it along).
    root = next((f for f in STAGING if os.path.isdir(f) and not os.path.islink(f)
                 and not any(f == w or f.startswith(w + "/") for w in wanted)), None)
    if root is None:
        raise Refused(errno.ENOENT, "no folder to build the worker's view in")
    _check(libc.mount(b"tmpfs", root.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=1m,mode=0755"), "a new root")

    def inside(path: str) -> bytes:
        return (root + path).encode()

    def bind(folder: str, fd: int, rw: bool) -> None:
        os.makedirs(inside(folder), exist_ok=True)
        _check(libc.mount(f"/proc/self/fd/{fd}".encode(), inside(folder), None, MS_BIND | MS_REC, None),
               f"binding {folder}")
        if not rw:
            _read_only(libc, inside(folder), True)

    for link, target in links.items():
        if link not in wanted:
            os.symlink(target, inside(link))
    for folder, fd, rw in held:  # /dev first: its private /dev/shm goes on top of it
        if folder == "/dev":
            bind(folder, fd, rw)
    for private in ("/tmp", "/dev/shm"):
        if private == "/tmp" or "/dev" in wanted and os.path.isdir(private):
            os.makedirs(inside(private), exist_ok=True)
            _check(libc.mount(b"tmpfs", inside(private), b"tmpfs", MS_NOSUID | MS_NODEV, TMPFS_OPTIONS),
                   f"a private {private}")
    for folder, fd, rw in held:  # a parent before its children, so that the children's mounts stay on top
        if folder != "/dev":
            bind(folder, fd, rw)
    for path in hide:
        if not os.path.lexists(inside(path)):
            continue
        if os.path.isdir(inside(path)):
            _check(libc.mount(b"tmpfs", inside(path), b"tmpfs", MS_NOSUID | MS_NODEV, HIDING_OPTIONS), f"hiding {path}")
            for folder, fd, rw in held:
                if folder.startswith(path + "/"):
                    bind(folder, fd, rw)
        else:
            _check(libc.mount(b"/dev/null", inside(path), None, MS_BIND, None), f"hiding {path}")
    for alias, fd, rw in linked:  # the path through a link, where the link itself is not in view
        if not os.path.lexists(inside(alias)):
            try:
                bind(alias, fd, rw)
            except OSError:  # under a read-only folder, whose own link then leads the way
                pass
    for _, fd, _ in held + linked:
        os.close(fd)
    os.makedirs(inside("/proc"), exist_ok=True)
    if workdir:
        os.makedirs(inside(os.path.realpath(workdir)), exist_ok=True)
    _read_only(libc, root.encode(), False)
    os.chdir(root)
    # The old root stays below, out of reach: the worker keeps no capability to chroot again (enter()). It
    # is not detached (pivot_root): a new /proc may only be mounted where one is still seen in full.
    _check(libc.mount(b".", b"/", None, MS_MOVE, None), "moving the new root")
    _check(libc.chroot(b"."), "entering the new root")
    os.chdir("/")


def _read_only(libc, target: bytes, recursive: bool) -> None:
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    _check(libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, target, AT_RECURSIVE if recursive else 0,
                        ctypes.byref(attr), ctypes.sizeof(attr)), f"making {target.decode()} read-only")


class _Mapper:
    """A process forked before the namespaces are made, which stays outside them: it alone may map the ids
    of an unprivileged user into the user namespace its parent makes (a process inside may map only the
    user it already is). :meth:`map` says go, after the parent's unshare (or its failure), and waits."""

    def __init__(self, uid: int, gid: int):
        go_r, self.go = os.pipe()
        self.done, done_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            said = b""
            try:
                os.close(self.go)
                os.close(self.done)
                if os.read(go_r, 1) == b"1":
                    parent = os.getppid()
                    for name, text in (("setgroups", "deny"), ("uid_map", f"0 0 1\n{uid} {uid} 1"),
                                       ("gid_map", f"0 0 1\n{gid} {gid} 1")):
                        _write(f"/proc/{parent}/{name}", text)
            except BaseException as exc:  # noqa: BLE001
                said = (exc.strerror if isinstance(exc, OSError) and exc.strerror else repr(exc)).encode()[:300]
            finally:
                os.write(done_w, said or b"ok")
                os._exit(0)
        os.close(go_r)
        os.close(done_w)

    def map(self, made: bool) -> None:
        """Map the ids where the namespace was ``made`` (else only let the process go); raises Refused where
        the mapping failed."""
        try:
            os.write(self.go, b"1" if made else b"0")
        except OSError:
            pass
        os.close(self.go)
        said = os.read(self.done, 400)
        os.close(self.done)
        os.waitpid(self.pid, 0)
        if made and said != b"ok":
            raise Refused(errno.EPERM, said.decode(errors="replace") or "mapping the learner's user")


def enter(ids: tuple[int, int] | None = None) -> None:
    """In the worker, process 1 of its PID namespace, before anything else: its own /proc (its /proc/sys
    read-only: no setting of the kernel's can be written, whatever the user), limits, the unprivileged
    user ``ids`` where :func:`confine` was given them, and no way back to any privilege. Raises Refused."""
    libc = _libc()
    _check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mounting /proc")
    _check(libc.mount(b"/proc/sys", b"/proc/sys", None, MS_BIND | MS_REC, None), "binding /proc/sys")
    _read_only(libc, b"/proc/sys", True)
    resource.setrlimit(resource.RLIMIT_NPROC, (PROCESS_LIMIT, PROCESS_LIMIT))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no new privileges")
    cap = 0
    while libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1
    if ids is not None:  # for good (it clears the capabilities left, which the capset below confirms)
        os.setresgid(ids[1], ids[1], ids[1])
        os.setresuid(ids[0], ids[0], ids[0])
    data = (_CapData * 2)()  # all zero: no effective, permitted or inheritable capability
    _check(libc.capset(ctypes.byref(_CapHeader(LINUX_CAPABILITY_VERSION_3, 0)), data), "dropping capabilities")


def probe(ids: tuple[int, int] | None = None) -> str | None:
    """None when learner code can be confined here (as ``ids``: see :func:`confine`), else why not (one
    sentence). Forks twice."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return "namespaces exist only on Linux"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child tries each step, and says what failed (nothing when all went well)
        os.close(read)
        try:
            confine(ids=ids)
            inner = os.fork()
            if inner == 0:
                try:
                    enter(ids)
                except BaseException as exc:  # noqa: BLE001
                    os.write(write, _reason(exc))
                os._exit(0)
            os.waitpid(inner, 0)
        except BaseException as exc:  # noqa: BLE001
            os.write(write, _reason(exc))
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 4096):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    reason = b"".join(chunks).decode(errors="replace").strip()
    return reason or None


def _reason(exc: BaseException) -> bytes:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
    return f"the kernel refused {text}".encode()[:500]
