"""Worker processes: each one started, confined, limited, talked to and ended by one owner.

A worker is started by a *monitor*, a small process of the grader's (forked by a zygote, see
:mod:`grader.sandbox.zygote`, or started afresh as ``python -m grader.sandbox.pool``). The monitor confines itself
(:func:`grader.sandbox.isolation.confine`) when the worker will run learner code and the kernel allows it,
forks the worker, tells the grader the worker's pid and how it is isolated, and then waits: when the
worker ends it says its exit status; when the grader goes away or asks it to, it kills the worker.
A confined worker is process 1 of its PID namespace, so killing it ends everything it started; an
unconfined one is a session leader whose monitor is a subreaper, killing whatever is left below it.

Where the kernel refuses the namespaces and the grader runs as root (an autograder's container), a
worker for learner code is not left root: it becomes an unprivileged user of its own (see
:func:`learner_user`), with the limits and a private ``TMPDIR``, so that it cannot signal, trace or read the
grader's processes or another worker's, nor read what only root may read; what it leaves is removed after
it (:func:`remove_owned`). It is told as isolation ``user``.

On the grader's side, :class:`Worker` owns one such process from start to end (a context manager).
"""

from __future__ import annotations

import errno
import json
import os
import resource
import select
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from grader.core.launch import python_command
from grader.sandbox import protocol
from grader.sandbox.config import worker_env
from grader.sandbox.isolation import import_path

READY_SECONDS = 120.0  # for a worker to start and import JAX
OUTPUT_KEEP = 4096  # bytes of printed output kept from each end
PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 36, 1, 38


class WorkerFailure(Exception):
    """The worker could not answer: it timed out, died, or broke the protocol."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind  # "timeout", "memory", "killed", "crash", "protocol", "isolation"
        self.message = message


@dataclass
class Output:
    """Printed output of a worker, truncated in the middle once it grows past 2 * OUTPUT_KEEP bytes."""

    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = OUTPUT_KEEP - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail = (self.tail + chunk)[-OUTPUT_KEEP:]

    def text(self) -> str:
        if self.total <= len(self.head) + len(self.tail):
            return (self.head + self.tail).decode(errors="replace")
        skipped = self.total - len(self.head) - len(self.tail)
        return (self.head.decode(errors="replace") + f"\n[... {skipped} bytes of output left out ...]\n"
                + self.tail.decode(errors="replace"))


@dataclass(frozen=True)
class Spec:
    """What a worker is started with. ``confine``: it will run learner code, so it is confined where
    the kernel allows it; ``visible``: folders it must see (read-only) beside the system's, the
    interpreter's and the grader's own (see :func:`grader.sandbox.isolation.allowed`); its compile cache is the one
    folder it may write outside a private /tmp."""

    confine: bool
    compile_cache: str = ""
    visible: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()  # what it must not read, where it is confined

    def request(self) -> dict:
        return {"confine": self.confine, "compile_cache": self.compile_cache, "cwd": os.getcwd(),
                "visible": list(self.visible), "hidden": list(self.hidden), "env": worker_env(),
                "path": import_path()}


class Worker:
    """One worker process, from start to end. ``request`` sends a message; ``receive`` waits for a reply
    and checks it (:func:`grader.sandbox.protocol.parse_reply`); ``kill`` ends it and everything it started."""

    def __init__(self, spec: Spec, zygote=None, fallback: bool = True):
        """Forked by ``zygote`` (a :class:`grader.sandbox.zygote.Zygote`) when given and able, else started afresh
        (or, without ``fallback``, OSError)."""
        req_r, self._req_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        out_r, out_w = os.pipe()
        self._status, theirs = socket.socketpair()
        fds = [req_r, resp_w, out_w, theirs.fileno()]
        self.proc: subprocess.Popen | None = None
        try:
            if zygote is None or not zygote.fork(spec.request(), fds):
                if not fallback:
                    self._status.close()
                    for fd in (self._req_w, self._resp_r, out_r):
                        os.close(fd)
                    raise OSError("the zygote could not fork the worker")
                self.proc = subprocess.Popen(
                    [*python_command("grader.sandbox.pool"), json.dumps(spec.request()), *map(str, fds)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    pass_fds=fds, start_new_session=True, env=worker_env(), close_fds=True)
        finally:
            for fd in fds[:3]:
                os.close(fd)
            theirs.close()
        self.output = Output()
        self._drain = threading.Thread(target=self._read_output, args=(out_r,), daemon=True)
        self._drain.start()
        self.pid: int | None = None
        self.isolation: str | None = None  # "namespaces" or "none", once the monitor has said
        self.refused: str | None = None  # the monitor could not confine the worker: why
        self.limited: str | None = None  # the monitor ended the worker for a limit no mount sets: why
        self.returncode: int | None = None
        self._monitor_done = False
        self._buffer = b""
        self.ready = False
        self.backend: str | None = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the monitor's messages ------------------------------------------------------------------------

    def _read_status(self, timeout: float) -> bool:
        """Take in what the monitor said within ``timeout``; False if it said nothing."""
        if self._monitor_done or not select.select([self._status], [], [], max(0.0, timeout))[0]:
            return False
        try:
            chunk = self._status.recv(4096)
        except OSError:
            chunk = b""
        if not chunk:
            self._monitor_done = True
            if self.returncode is None:
                self.returncode = 255  # the monitor died: the worker went with it (see monitor())
            return True
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            kind, _, value = line.decode(errors="replace").partition(" ")
            if kind == "pid":
                pid, _, isolation = value.partition(" ")
                self.pid, self.isolation = int(pid), isolation
            elif kind == "refused":
                self.refused = value
            elif kind == "limit":
                self.limited = value
            elif kind == "exit":
                self.returncode = int(value)
        return True

    def started(self, timeout: float = READY_SECONDS) -> bool:
        """Wait until the monitor has forked the worker (or failed to); whether it did."""
        deadline = time.monotonic() + timeout
        while self.pid is None and self.refused is None and not self._monitor_done:
            if not self._read_status(deadline - time.monotonic()) and time.monotonic() >= deadline:
                break
        return self.pid is not None

    def poll(self) -> int | None:
        while self.returncode is None and self._read_status(0):
            pass
        return self.returncode

    def wait(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while self.poll() is None and time.monotonic() < deadline:
            self._read_status(min(0.2, deadline - time.monotonic()))
        return self.returncode

    # -- requests and replies --------------------------------------------------------------------------

    def _read_output(self, fd: int) -> None:
        with os.fdopen(fd, "rb", buffering=0) as stream:
            while chunk := stream.read(65536):
                self.output.add(chunk)

    def request(self, header: dict, arrays: list = ()) -> None:
        specs, payloads = protocol.pack_arrays(list(arrays))
        try:
            protocol.write_message(self._req_w, dict(header, arrays=specs), payloads)
        except OSError:
            pass  # the worker died; receive() says how

    def receive(self, timeout: float, max_bytes: int = 0, expect: str = "result",
                ready_seconds: float = READY_SECONDS) -> protocol.Reply:
        """The next reply, checked to be the ``expect`` kind (see :func:`grader.sandbox.protocol.parse_reply`),
        with at most ``max_bytes`` of array data. The first call also waits for the worker to start
        (importing JAX is not the graded code's time: it has its own allowance, ``ready_seconds``)."""
        if self._resp_r < 0:
            raise WorkerFailure("crash", "the worker has ended")
        self.wait_ready(max(timeout, ready_seconds))
        return self._receive(timeout, max_bytes, expect)

    def wait_ready(self, timeout: float) -> None:
        """Wait for the worker's first message, which says it has started and imported JAX."""
        if not self.ready:
            self.ready = True
            self.backend = self._receive(timeout, 0, "ready").backend

    def _receive(self, timeout: float, max_bytes: int, expect: str) -> protocol.Reply:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerFailure("timeout", f"no answer within {timeout:.0f} s")
            if select.select([self._resp_r], [], [], remaining)[0]:
                break
        try:
            return protocol.parse_reply(*protocol.read_message(self._resp_r, max_payload=max_bytes), expect)
        except EOFError:
            raise self._death() from None
        except protocol.ProtocolError as exc:
            self.kill()
            raise WorkerFailure("protocol", f"it sent a malformed answer ({exc})") from None

    def _death(self) -> WorkerFailure:
        self.started(2.0)
        if self.refused is not None:
            return WorkerFailure("isolation", f"learner code could not be isolated: {self.refused}")
        code = self.wait(2.0)
        if self.limited is not None:
            return WorkerFailure("crash", self.limited)
        if code is None:
            self.kill()
            code = self.returncode
        self._drain.join(timeout=1)
        printed = self.output.text()
        if any(sign in printed for sign in ("bad_alloc", "MemoryError", "RESOURCE_EXHAUSTED", "Out of memory")):
            return WorkerFailure("memory", "the process ran out of memory")
        if self.pid is None:
            return WorkerFailure("crash", "the worker could not start: does `python -c 'import jax'` work?")
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            if -code == signal.SIGKILL:  # not the grader's doing: a time limit is said as such before this
                return WorkerFailure("killed", f"the process was killed ({name}) from outside the grader: by the "
                                               f"system for using too much memory, or by the code itself")
            return WorkerFailure("crash", f"the process died on signal {name}")
        return WorkerFailure("crash", f"the process exited with status {code} before answering "
                                      "(does the code call sys.exit or os._exit?)")

    # -- the end ---------------------------------------------------------------------------------------

    def kill(self) -> None:
        """End the worker and everything it started. Its monitor does it: it alone knows the worker's pid
        still names the worker (it has not collected it yet)."""
        try:
            self._status.send(b"kill\n")
        except OSError:
            pass
        for fd in (self._req_w, self._resp_r):
            if fd >= 0:
                os.close(fd)
        self._req_w = self._resp_r = -1

    def close(self) -> None:
        """Ask the worker to quit; kill it if it does not at once (a stray thread must not keep us
        waiting); then let its monitor go."""
        if self._req_w >= 0 and self.poll() is None and self.pid is not None:
            self.request({"op": "quit"})
            self.wait(0.5)
        self.kill()
        self.wait(2.0)
        self._status.close()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._drain.join(timeout=1)


# -- the monitor ----------------------------------------------------------------------------------------


def monitor(request: dict, req_fd: int, resp_fd: int, out_fd: int, status_fd: int, refused: str | None) -> None:
    """Start the worker ``request`` describes, report on it, and end it when told; never returns.

    ``refused`` is why learner code cannot be confined here (None when it can), as probed once."""
    from grader.sandbox import isolation

    status = socket.socket(fileno=status_fd)
    mode = "none"
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        ids = None
        try:
            if request["confine"] and refused is None:
                ids = confined_ids(request["env"])
                isolation.confine([request["compile_cache"]] if request["compile_cache"] else [], request["visible"],
                                  request["hidden"], request["cwd"], ids, request["path"])
                mode = "namespaces"
            else:
                _prctl(PR_SET_CHILD_SUBREAPER, 1)  # what the worker leaves behind comes back here, to be killed
                if request["confine"] and confined_ids(request["env"]) is not None:
                    mode = "user"
        except isolation.Refused as exc:
            status.sendall(f"refused {exc.strerror}\n".encode())
            os._exit(1)
        pid = os.fork()
        if pid == 0:
            status.close()
            become_worker(request, mode, req_fd, resp_fd, out_fd, ids)
        for fd in (req_fd, resp_fd, out_fd):
            os.close(fd)
        status.sendall(f"pid {pid} {mode}\n".encode())
        user = learner_user(request["env"], pid) if mode == "user" else None
        own = user is not None and user[0] >= LEARNER_UIDS[0]  # (a shared user's files are not this worker's alone)
        code = _watch(pid, status, (lambda: _over_temporary_limit(user[0])) if own else None)
        if mode != "namespaces":
            _kill_descendants()
        if own:  # a user of its own: nothing of it outlives the worker
            remove_owned(user[0])
        try:
            status.sendall(f"exit {code}\n".encode())
        except OSError:
            pass
    finally:
        os._exit(0)


def _watch(pid: int, status: socket.socket, over_limit=None) -> int:
    """Wait until the worker ends, killing it when the grader says so or goes away, or when ``over_limit()``
    (asked every :data:`WATCH_SECONDS`) says why it must end (said to the grader); its exit status."""
    pidfd = os.pidfd_open(pid)
    while True:
        ready = select.select([pidfd, status], [], [], WATCH_SECONDS if over_limit else None)[0]
        if pidfd in ready:
            break
        if not ready:
            why = over_limit()
            if why:
                _kill(pid)
                try:
                    status.sendall(f"limit {why}\n".encode())
                except OSError:
                    pass
                break
            continue
        try:
            chunk = status.recv(64)
        except OSError:
            chunk = b""
        if not chunk or b"kill" in chunk:
            _kill(pid)
            break
    _, code = os.waitpid(pid, 0)
    os.close(pidfd)
    return os.waitstatus_to_exitcode(code)


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass


def _kill_descendants() -> None:
    """Kill and collect every process left below this subreaper (what an unconfined worker started)."""
    for _ in range(100):
        try:
            children = open(f"/proc/self/task/{os.getpid()}/children").read().split()
        except OSError:
            children = []
        if not children:  # (or a kernel without that file: then nothing waits on what is left)
            return
        for child in children:
            _kill(int(child))
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _prctl(option: int, value: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


WATCH_SECONDS = 0.5  # how often an unconfined worker's temporary files are counted
TEMPORARY_LIMIT = 256 << 20  # bytes an unconfined worker may keep in TEMPORARY, as a confined one's private /tmp


def _over_temporary_limit(uid: int) -> str | None:
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


LEARNER_USER = "GRADE_LEARNER_USER"  # the user learner code runs as where root grades unconfined
LEARNER_UIDS = 2_000_000_000, 1 << 22  # where a worker's own uid comes from there: the first, how many (pids)
TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm")  # what any user may write in: emptied of a worker's files


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


def become_worker(request: dict, mode: str, req_fd: int, resp_fd: int, out_fd: int,
                  ids: tuple[int, int] | None = None) -> None:
    """Turn this fresh fork into a worker: confined (``mode`` "namespaces", as the user ``ids`` where they
    are given), an unprivileged user (``mode`` "user") or a session of its own."""
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the monitor killed, by whatever: the worker goes too
        if mode == "namespaces":
            from grader.sandbox import isolation

            isolation.enter(ids)
        if request["confine"] and mode != "namespaces":
            # Unconfined learner code could read or rewrite any compile cache: it gets none.
            request = dict(request, compile_cache="")
        if mode == "user":
            from grader.sandbox import isolation

            uid, gid = learner_user(request["env"], os.getpid())
            if uid >= LEARNER_UIDS[0]:  # a user of its own: a temporary folder of its own too
                remove_owned(uid)  # whatever an earlier worker of that uid (another pid's) may have left
                folder = private_tmp(uid)
                request = dict(request, cwd=folder, env=dict(request["env"], TMPDIR=folder))
            else:
                request = dict(request, cwd="/")
            resource.setrlimit(resource.RLIMIT_NPROC, (isolation.PROCESS_LIMIT, isolation.PROCESS_LIMIT))
            resource.setrlimit(resource.RLIMIT_FSIZE, (isolation.FILE_SIZE_LIMIT, isolation.FILE_SIZE_LIMIT))
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)  # for good: no way back to root
            _prctl(PR_SET_NO_NEW_PRIVS, 1)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a change of user clears it
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdin = sys.__stdin__ = open(0, closefd=False)  # whatever object the forked process had
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        os.environ.clear()
        os.environ.update(request["env"])
        try:
            os.chdir(request["cwd"])
        except OSError:  # a folder the unprivileged user it now is cannot enter (its source comes by the protocol)
            os.chdir("/")
        sys.path[:] = request["path"]  # no current folder, no PYTHONPATH, no checkout
        sys.argv = [sys.argv[0]]
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()  # a fresh global seed, as a fresh process would have

        from grader.sandbox import worker

        worker.serve(req_fd, resp_fd, request["compile_cache"])
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exc()
    finally:
        os._exit(1)


def why_not_confined(env: dict) -> str | None:
    """None where learner code can be confined here, as the user :func:`confined_ids` names, else why not
    (one sentence). Forks twice: call it before any thread starts."""
    from grader.sandbox import isolation

    try:
        return isolation.probe(confined_ids(env))
    except isolation.Refused as exc:
        return exc.strerror


def main() -> None:
    """``python -m grader.sandbox.pool REQUEST_JSON REQ RESP OUT STATUS``: a monitor started afresh."""
    request = json.loads(sys.argv[1])
    req_fd, resp_fd, out_fd, status_fd = map(int, sys.argv[2:6])
    monitor(request, req_fd, resp_fd, out_fd, status_fd, why_not_confined(request["env"]) if request["confine"] else None)


if __name__ == "__main__":
    main()
