"""A process that imports JAX once and forks workers' monitors from there (see :mod:`grader.sandbox.pool`).

Starting Python and importing JAX costs a worker about a second of CPU, and a run has two workers (the
learner's and the reference's). So a run of `grade` starts one zygote, which first asks the kernel
whether learner code can be confined here (:func:`grader.sandbox.isolation.probe`, before any thread exists),
tells the run, then imports JAX, NumPy and the modules the reference imports, and forks a monitor per
worker. The zygote never loads graded code. The command line starts it before it imports anything
heavy itself: it forks the zygote from itself while it still has a single thread, and otherwise starts
``python -m grader.sandbox.zygote``.

When the run ends, a zygote whose workers are confined stays for the next run of the same checkout
with the same :func:`grader.grading.cache.fingerprint`, for GRADE_WARM_SECONDS (default 600; 0 keeps none): a
re-grade then gets its learner's worker without importing JAX again. It listens on a socket in a folder
only this user can enter, and serves only this user's processes in its own PID namespace (a confined
worker is in another). A run uses a zygote found there only after checking that it is the process
that wrote the socket's record (pid and start time), only for the learner's worker, and only if it
answers within FOUND_SECONDS; else it kills it and starts its own. Zygotes of the same checkout with
another fingerprint (the grader or a library changed, or the environment) are stopped.

A request is one SOCK_SEQPACKET message: a JSON object (see :class:`grader.sandbox.pool.Spec`) with four
descriptors: the worker's request, answer and output pipes, and the monitor's status socket.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import importlib
import io
import json
import os
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.launch import python_command
from grader.core.verdict import Isolation
from grader.sandbox import pool
from grader.sandbox.config import worker_env
from grader.sandbox.pool import Spec, Worker

IDLE_SECONDS = 600.0
FOUND_SECONDS = 3.0  # for a zygote found waiting to fork (it answers in milliseconds when healthy)
HELLO_SECONDS = 30.0  # for a zygote just started to say whether learner code can be confined


def supported() -> bool:
    return hasattr(socket, "SOCK_SEQPACKET") and hasattr(socket, "send_fds") and hasattr(os, "fork")


def idle_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("GRADE_WARM_SECONDS", IDLE_SECONDS)))
    except ValueError:
        return IDLE_SECONDS


def base_folder() -> Path:
    """This user's folder for zygotes, one folder inside per checkout's cache folder."""
    return Path(tempfile.gettempdir()) / f"flax-katas-{os.getuid()}"


def private_folder(cache_folder: Path) -> Path | None:
    """This user's folder for the zygotes of one checkout's cache folder: a real folder (no symlink on
    the way from the user's own folder), owned by this user, that nobody else can enter; else None."""
    base = base_folder()
    folder = base / hashlib.sha256(str(Path(cache_folder).resolve()).encode()).hexdigest()[:16]
    for path in (base, folder):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
        try:
            info = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
    return folder


def key() -> str:
    """What a zygote serves: the fingerprint, and the interpreter and installed packages it imported."""
    import sysconfig

    from grader.sandbox.fingerprint import fingerprint

    h = hashlib.sha256(f"{fingerprint()}\0{os.path.realpath(sys.executable)}\0{sys.prefix}\0".encode())
    for kind in ("purelib", "platlib"):  # installing or removing a package changes the folder's mtime
        try:
            h.update(f"{os.stat(sysconfig.get_paths()[kind]).st_mtime_ns}\0".encode())
        except OSError:
            pass
    return h.hexdigest()[:24]


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (with the pid, it names one process)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def peer_pid(conn: socket.socket) -> tuple[int, int]:
    pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def registered_pid(folder: Path, name: str) -> int | None:
    """The pid the zygote ``name`` wrote in its pid file, if that process still is the one that wrote it."""
    try:
        pid, started = (folder / f"{name}.pid").read_text().split()
        pid = int(pid)
    except (OSError, ValueError):
        return None
    return pid if start_time(pid) == started else None


def discard(folder: Path, name: str) -> None:
    """Kill the zygote ``name`` (if the record names a live one) and remove its files."""
    pid = registered_pid(folder, name)
    if pid is not None:
        try:
            handle = os.pidfd_open(pid)
        except OSError:
            handle = None
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        if handle is not None:  # gone before this returns (a killed JAX process takes a moment to end)
            select.select([handle], [], [], 2.0)
            os.close(handle)
    remove_files(folder, name)


def remove_files(folder: Path, name: str) -> None:
    """The zygote ``name``'s socket and record, and the checkout's folder once it holds nothing else."""
    for suffix in (".sock", ".pid"):
        try:
            os.unlink(folder / f"{name}{suffix}")
        except OSError:
            pass
    try:
        os.rmdir(folder)
    except OSError:
        pass


# -- the grader's side ---------------------------------------------------------------------------------


class Zygote:
    """The grader's handle on a zygote: the run's own (``control`` is its socket) or one found waiting."""

    def __init__(self, control: socket.socket | None = None, path: Path | None = None, pid: int | None = None):
        self.control, self.path, self.pid = control, path, pid
        self._refused: str | None = None  # why learner code cannot be confined, once the zygote has said
        self._said = control is None  # a found zygote is kept only where learner code can be confined

    @classmethod
    def start(cls, cache_folder: Path | None, preload: list[str]) -> Zygote | None:
        """Start the run's zygote; it may stay after the run when there is a cache folder."""
        if not supported():
            return None
        folder = private_folder(cache_folder) if cache_folder is not None and idle_seconds() > 0 else None
        name = key() if folder is not None else ""
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except OSError:
            return None
        env = worker_env()
        try:
            if single_threaded():  # a fork of this command, detached at once (no child left to reap)
                prepare_title()
                child = os.fork()
                if child == 0:
                    try:
                        if os.fork() == 0:
                            become_zygote(theirs, folder, name, preload, env)
                    finally:
                        os._exit(0)
                os.waitpid(child, 0)
            else:
                subprocess.Popen(
                    [*python_command("grader.sandbox.zygote"), str(theirs.fileno()), str(folder or ""), name,
                     *preload],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    pass_fds=(theirs.fileno(),), start_new_session=True, env=env, close_fds=True)
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        return cls(control=ours)

    @classmethod
    def find(cls, cache_folder: Path | None) -> Zygote | None:
        """The zygote an earlier run left for this checkout and fingerprint, if it is still the process
        that recorded itself; zygotes of other fingerprints are stopped."""
        if not supported() or cache_folder is None or idle_seconds() <= 0:
            return None
        folder = private_folder(cache_folder)
        if folder is None:
            return None
        name = key()
        for other in {p.stem for p in folder.iterdir() if p.suffix in (".sock", ".pid")} - {name}:
            discard(folder, other)
        path = folder / f"{name}.sock"
        pid = registered_pid(folder, name)
        if pid is None:
            if path.exists() or (folder / f"{name}.pid").exists():
                discard(folder, name)
            return None
        return cls(path=path, pid=pid)

    def refused(self) -> str | None:
        """Why learner code cannot be confined here (None when it can), as the zygote found out first."""
        deadline = time.monotonic() + HELLO_SECONDS
        while not self._said and time.monotonic() < deadline:
            if select.select([self.control], [], [], deadline - time.monotonic())[0]:
                try:
                    message = self.control.recv(4096).decode(errors="replace")
                except OSError:
                    message = ""
                self._said = True
                if message.startswith("isolation "):
                    word, _, reason = message.removeprefix("isolation ").partition(" ")
                    self._refused = None if word == "namespaces" else reason or "unknown"
                else:
                    self._refused = "the zygote ended before it could say"
        if not self._said:
            self._said, self._refused = True, "the zygote did not answer"
        return self._refused

    def fork(self, request: dict, fds: list[int]) -> bool:
        """Ask for a monitor on ``fds``. A found zygote that is not the one recorded, or does not answer
        within FOUND_SECONDS, is discarded: False, and the caller starts the worker another way."""
        message = json.dumps(request).encode()
        if self.control is not None:
            try:
                socket.send_fds(self.control, [message], fds)
                return True
            except OSError:
                return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
                conn.settimeout(FOUND_SECONDS)
                conn.connect(str(self.path))
                pid, uid = peer_pid(conn)
                if uid != os.getuid() or pid != self.pid:
                    raise OSError("not the zygote that recorded itself")
                socket.send_fds(conn, [message], fds)
                if conn.recv(16) != b"forked":
                    raise OSError("no answer")
            return True
        except OSError:
            discard(self.path.parent, self.path.stem)
            return False

    def close(self) -> None:
        """End the run's use of its zygote (which then stays or exits, see the module's docstring)."""
        if self.control is not None:
            self.control.close()
            self.control = None


def stop(cache_folder: Path) -> bool:
    """Stop the zygotes waiting for runs of this cache folder (benchmarks and tests use this to measure
    cold runs); whether there was one."""
    folder = private_folder(cache_folder) if supported() else None
    if folder is None:
        return False
    names = {p.stem for p in folder.iterdir() if p.suffix in (".sock", ".pid")}
    for name in names:
        discard(folder, name)
    return bool(names)


def imports_of(source: str) -> list[str]:
    """The absolute modules a module's top level imports (worth importing before forking)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return sorted(set(names))


# -- a run's workers ----------------------------------------------------------------------------------


def learner_spec(folder: Path | None, visible: tuple[str, ...] = (), hidden: tuple[str, ...] = (),
                 learner: Path | None = None) -> Spec:
    """A learner's worker: confined, reading nothing in ``hidden``, writing only the compile cache of the
    graded file ``learner``: a folder of its own, keyed by the file's path, which nothing trusted reads and
    no other file's grading (the reference's, a classmate's) writes or sees. Where learner code runs
    unconfined it gets none (see :mod:`grader.sandbox.pool`), nor in a class's grading, where each file is
    graded once from a copy of its own."""
    from grader.problem.problems import class_grading

    if folder is None or class_grading():
        return Spec(confine=True, visible=visible, hidden=hidden)
    key = hashlib.sha256(os.fsencode(os.path.abspath(learner) if learner else "")).hexdigest()[:16]
    cache = folder / "jax-learner" / key
    cache.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:  # learner code runs as an unprivileged user there (see :func:`pool.confined_ids`)
        try:
            ids = pool.confined_ids(worker_env())
        except OSError:
            ids = None
        if ids is not None:
            for path in (cache, *(Path(p, n) for p, dirs, files in os.walk(cache) for n in dirs + files)):
                os.lchown(path, *ids)
    return Spec(confine=True, compile_cache=str(cache), visible=visible, hidden=hidden)


@dataclass
class Launch:
    """Where a run's workers come from, prepared as early as possible so that JAX imports while the
    grader reads the problem: a zygote an earlier run left (for the learner's worker only) or the run's
    own, and the learner's worker, started (not yet loaded)."""

    learner: Worker
    spec: Spec
    found: Zygote | None = None
    own: Zygote | None = None
    started: float = field(default_factory=time.time)  # (wall-clock time: what files' times are compared with)

    @classmethod
    def prepare(cls, reference: Path, cache_folder: Path | None, visible: tuple[str, ...] = (),
                hidden: tuple[str, ...] = (), learner: Path | None = None) -> Launch:
        """``visible``: folders the learner's code must see (the problems, the learner's file's folder);
        ``hidden``: what it must not read (:func:`grader.problem.problems.hidden_from_learners`); ``learner``: the
        graded file (its compile cache is its own)."""
        if cache_folder is not None:
            cache_folder.mkdir(parents=True, exist_ok=True)
            if cache_folder.stat().st_uid == os.geteuid():
                cache_folder.chmod(0o700)  # this user's alone: learner code running as another cannot read it
        spec = learner_spec(cache_folder, visible, hidden, learner)
        found = Zygote.find(cache_folder)
        if found is not None:
            try:
                return cls(Worker(spec, found, fallback=False), spec, found=found)
            except OSError:
                pass  # it was discarded: start our own
        try:
            preload = imports_of(reference.read_text())
        except OSError:
            preload = []
        own = Zygote.start(cache_folder, preload)
        return cls(Worker(spec, own), spec, own=own)

    def refused(self) -> str | None:
        """Why learner code cannot be confined here; None when it is."""
        if self.found is not None:
            return None  # only a zygote whose workers are confined stays for later runs
        if self.own is not None:
            return self.own.refused()
        self.learner.started()
        return None if self.learner.isolation == "namespaces" else (self.learner.refused or "not available here")

    def isolation(self) -> Isolation:
        """How learner code is isolated: in namespaces, as an unprivileged user (unconfined; see
        :mod:`grader.sandbox.pool`) or not at all. As an unprivileged user, what the namespaces would hide is
        withheld from it by permissions before it starts (:func:`grader.sandbox.pool.withhold`)."""
        if self.refused() is None:
            return Isolation.NAMESPACES
        self.learner.started()
        if self.learner.isolation != "user":
            return Isolation.NONE
        pool.withhold(self.spec.hidden)
        return Isolation.USER

    @property
    def zygote(self) -> Zygote | None:
        """What the learner's workers are forked from."""
        return self.found or self.own

    def close(self) -> None:
        if self.own is not None:
            self.own.close()
        trim(self.spec.compile_cache)
        if self.learner.isolation == "user" and not pool.own_learner_ids():
            # The user the workers shared: nothing of it outlives the run (a class is graded one at a time).
            ids = pool.learner_user(worker_env())
            if ids is not None:
                pool.remove_owned(ids[0], self.started if ids[0] == pool.overflow_uid() else None)


LEARNER_CACHE_BYTES = 256 << 20  # a learner's compile cache larger than this after a run is emptied


def trim(folder: str) -> None:
    """Empty a learner's compile cache grown past :data:`LEARNER_CACHE_BYTES` (learner code writes there: what
    it leaves must stay bounded). Its files are counted without following links."""
    if not folder:
        return
    total = 0
    for path, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(path, name)).st_size
            except OSError:
                pass
    if total > LEARNER_CACHE_BYTES:
        shutil.rmtree(folder, ignore_errors=True)


# -- the zygote ----------------------------------------------------------------------------------------


def single_threaded() -> bool:
    """Whether this process has a single thread (Linux). Only such a process is forked to make a zygote:
    a thread the child would not have might hold a lock the child needs (NumPy's import alone starts
    BLAS threads)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def become_zygote(control: socket.socket, folder: Path | None, name: str, preload: list[str], env: dict) -> None:
    """Turn a fork of the command, made before it imported anything heavy, into the zygote that
    ``python -m grader.sandbox.zygote`` would be, less a Python start: a session of its own, ``env``, nothing
    open but null and ``control``, and unbuffered output (``PYTHONUNBUFFERED`` in ``env`` comes too
    late for the streams a fork inherits), which its workers then have too."""
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        # Close what the command inherited, as a fresh start with close_fds would. The one Python object
        # here that holds a descriptor closed now (the grader's end of the pair) is on this stack, which
        # never unwinds, so nothing closes that number again once it is reused.
        keep = control.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))
        os.environ.clear()
        os.environ.update(env)
        sys.dont_write_bytecode = True
        for fd, stream_name, errors in ((1, "stdout", sys.stdout.errors), (2, "stderr", "backslashreplace")):
            stream = io.TextIOWrapper(open(fd, "wb", buffering=0, closefd=False), encoding=sys.stdout.encoding,
                                      errors=errors, newline="\n", write_through=True)
            setattr(sys, stream_name, stream)
            setattr(sys, f"__{stream_name}__", stream)
        run(control, folder, name, preload)
    finally:
        os._exit(1)


def run(control: socket.socket, folder: Path | None, name: str, preload: list[str]) -> None:
    """The zygote (see the module's docstring); never returns. (One function over 60 lines: its event loop
    and the state the loop shares, read top to bottom as the process lives.)"""
    refused = pool.why_not_confined(dict(os.environ))
    try:
        control.send(f"isolation {'namespaces' if refused is None else 'none ' + refused}".encode())
    except OSError:
        os._exit(0)
    listener = None

    def terminate(signum, frame):
        if listener is not None:
            discard_own(folder, name)
        os._exit(0)

    signal.signal(signal.SIGTERM, terminate)
    prepare_title()
    title(f"grade zygote (forks grade's workers; ends {f'after {idle_seconds():.0f} s idle' if folder else 'with its run'})")

    import jax  # noqa: F401
    import jax.numpy  # noqa: F401
    import numpy  # noqa: F401

    from grader.sandbox import worker  # noqa: F401

    for module in preload:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001  (a worker imports it again, and reports what goes wrong)
            pass

    gc.freeze()  # what was imported stays out of the workers' collections, its pages shared
    # Found by other runs only once ready to fork: one still importing JAX would not answer another run
    # within FOUND_SECONDS, and that run would stop it, and with it the worker its own run had asked for.
    listener = listen(folder, name) if folder is not None and refused is None else None
    idle = idle_seconds()
    last = time.monotonic()
    own_pid_ns = _namespace(os.getpid())
    while True:
        reap()
        ready = select.select([s for s in (control, listener) if s is not None], [], [], 1.0)[0]
        if control in ready and not serve_one(control, (control, listener), refused):
            control.close()  # the run is over
            control = None
            last = time.monotonic()
        if listener is not None and listener in ready:
            try:
                conn, _ = listener.accept()
            except OSError:
                conn = None
            if conn is not None:
                with conn:
                    conn.settimeout(FOUND_SECONDS)
                    pid, uid = peer_pid(conn)
                    if uid == os.getuid() and _namespace(pid) == own_pid_ns and serve_one(conn, (control, listener), refused):
                        try:
                            conn.send(b"forked")
                        except OSError:
                            pass
                last = time.monotonic()
        if control is None and (listener is None or time.monotonic() - last > idle or registered_pid(folder, name) != os.getpid()):
            break
    if listener is not None:
        discard_own(folder, name)
    reap()
    os._exit(0)


def _namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def listen(folder: Path, name: str) -> socket.socket | None:
    """A socket listening at ``name``'s path, with its record; None if a live zygote already has it."""
    if registered_pid(folder, name) is not None:
        return None
    path = folder / f"{name}.sock"
    try:
        path.unlink(missing_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sock.bind(str(path))
        sock.listen(16)
        record = folder / f"{name}.{os.getpid()}.tmp"
        record.write_text(f"{os.getpid()} {start_time(os.getpid())}")
        os.replace(record, folder / f"{name}.pid")
        return sock
    except OSError:
        return None


def discard_own(folder: Path, name: str) -> None:
    """Remove this zygote's files, if they are still its own."""
    if registered_pid(folder, name) == os.getpid():
        remove_files(folder, name)


def reap() -> None:
    """Collect the monitors that have ended."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def title(text: str) -> None:
    """What ``ps`` shows for this process: not the command line of the run that forked it, which would make a
    kept zygote look like a grade that hangs. Written over the command line's own bytes (cut to its length),
    never over the environment's, which /proc keeps showing as it was."""
    import setproctitle

    setproctitle.setproctitle(text)


def prepare_title() -> None:
    """Find where the command line lies while the environment still says so (a fork clears it later)."""
    os.environ["SPT_NOENV"] = "1"  # setproctitle: leave the environment block alone
    import setproctitle

    setproctitle.getproctitle()
    del os.environ["SPT_NOENV"]


def serve_one(sock: socket.socket, close_in_child, refused: str | None) -> bool:
    """Fork the monitor one message asks for; False when the other side has closed (or sent nothing)."""
    try:
        message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 4)
    except OSError:
        return False
    try:
        if not message:
            return False
        request = json.loads(message)
        if len(fds) != 4:
            return False
        if os.fork() == 0:
            try:
                for s in (*close_in_child, sock):
                    if s is not None:
                        s.close()
                title("grade worker (forked by the zygote)")
                pool.monitor(request, *fds, refused)
            finally:
                os._exit(1)
        return True
    except Exception:  # noqa: BLE001  (a malformed request: the asker sees its worker never start)
        return False
    finally:
        for fd in fds:
            os.close(fd)


def main() -> None:
    """``python -m grader.sandbox.zygote CONTROL_FD FOLDER NAME PRELOAD...`` (FOLDER empty: keep none)."""
    run(socket.socket(fileno=int(sys.argv[1])), Path(sys.argv[2]) if sys.argv[2] else None, sys.argv[3], sys.argv[4:])


if __name__ == "__main__":
    main()
