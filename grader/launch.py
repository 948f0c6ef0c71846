"""Starting worker processes: afresh, or forked from a process that has already imported JAX.

Starting Python and importing JAX costs a worker about a second of CPU, and a run has two workers (the
learner's and the reference's) on a machine that may have two cores. So a run of `grade` starts one
zygote, which imports JAX, NumPy and the modules the reference imports, and forks each worker of the
run from there, into a session of its own. The zygote never loads graded code; after a fork, a worker
shares nothing with it but memory pages, copied on write. The command line starts the zygote, and asks
it for the learner's worker, before it imports anything heavy itself: it forks the zygote from itself
while it still has a single thread (which saves starting Python again), and otherwise starts
``python -m grader.launch``.

When the run ends, the zygote stays for the next `grade` with the same interpreter, grader code,
installed packages, cache folder and environment, listening on a socket in a folder only this user can
enter: a re-grade gets its learner's worker without importing JAX again. Only learner workers are
served that way: a process found at a path is not one this run started, so the reference's worker
always comes from the run's own zygote (or from a fresh start). It exits after GRADE_WARM_SECONDS
(default 600) without a request; with GRADE_WARM_SECONDS=0 none stays after a run.

A request is one SOCK_SEQPACKET message: a JSON object (compile cache folder, working folder,
environment) with four descriptors: the worker's request, answer and output pipes, and a socket on
which the zygote says the worker's pid (``pid N``) and, once it has ended, its exit status (``exit N``,
negative for a signal, as :mod:`subprocess` reports it).
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
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

IDLE_SECONDS = 600.0
READY_SECONDS = 120  # for a worker to start and import JAX
FOUND_SECONDS = 5.0  # for a zygote found waiting to fork (it answers in milliseconds when healthy)
# Environment variables read when JAX and the libraries are imported: a zygote serves only runs that
# agree on them. The rest of the environment travels with each request.
IMPORT_TIME_PREFIXES = ("JAX_", "XLA_", "TF_", "PYTHON", "LD_", "CUDA", "NVIDIA", "OMP_", "OPENBLAS_", "MKL_")


# XLA's CPU compiler spends most of a kata's grading time optimising programs that then run for
# microseconds: without LLVM optimisation and with the classic (non-MLIR) fusion emitters, compiling
# is several times faster; and code generated as one piece rather than split for parallel threads
# compiles in about half the time again (the two workers already keep both cores busy). Numerics stay
# IEEE (no fast math); both sides of a comparison use the same flags. They only concern the CPU backend.
COMPILE_FLAGS = ("--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false "
                 "--xla_cpu_parallel_codegen_split_count=1")


def worker_env() -> dict:
    """The environment of a worker (and of a zygote, which forks workers)."""
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="3",
                XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} {COMPILE_FLAGS}".strip())


def supported() -> bool:
    return hasattr(socket, "SOCK_SEQPACKET") and hasattr(socket, "send_fds") and hasattr(os, "fork")


def idle_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("GRADE_WARM_SECONDS", IDLE_SECONDS)))
    except ValueError:
        return IDLE_SECONDS


def socket_folder() -> Path | None:
    """This user's folder for zygote sockets, or None if it is not private to this user."""
    folder = Path(tempfile.gettempdir()) / f"flax-katas-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.stat()
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def socket_path(env: dict, cache_folder: Path) -> Path | None:
    """Where the zygote for these settings listens: the name hashes everything a worker depends on."""
    folder = socket_folder()
    if folder is None:
        return None
    h = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        h.update(source.name.encode() + b"\0" + source.read_bytes())
    h.update(f"{os.path.realpath(sys.executable)}\0{sys.prefix}\0{Path(cache_folder).resolve()}\0".encode())
    for kind in ("purelib", "platlib"):  # installing or removing a package changes the folder's mtime
        folder_path = sysconfig.get_paths()[kind]
        try:
            h.update(f"{folder_path}:{os.stat(folder_path).st_mtime_ns}\0".encode())
        except OSError:
            pass
    for name in sorted(env):
        if name.startswith(IMPORT_TIME_PREFIXES):
            h.update(f"{name}={env[name]}\0".encode())
    return folder / f"{h.hexdigest()[:24]}.sock"


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


# -- the grader's side ---------------------------------------------------------------------------------


class ForkedProcess:
    """What :class:`grader.sandbox.Worker` uses of ``subprocess.Popen``, for a worker a zygote forked."""

    def __init__(self, status: socket.socket):
        self.status = status
        self._pid: int | None = None
        self._buffer = b""
        self._ended = False  # the zygote's monitor has said all it will say
        self.returncode: int | None = None

    def _read(self, timeout: float) -> bool:
        """Take in what the monitor sent within ``timeout``; False if it sent nothing."""
        if self._ended or not select.select([self.status], [], [], timeout)[0]:
            return False
        try:
            chunk = self.status.recv(256)
        except OSError:
            chunk = b""
        if not chunk:
            self._ended = True
            if self.returncode is None and not self._exists():
                self.returncode = 255  # the monitor was killed: the status is lost, the worker is gone
            return True
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            kind, _, value = line.decode().partition(" ")
            if kind == "pid":
                self._pid = int(value)
            elif kind == "exit":
                self.returncode = int(value)
        return True

    def _exists(self) -> bool:
        if self._pid is None:
            return False
        try:
            os.kill(self._pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True

    def wait_for_pid(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while self._pid is None and not self._ended and self._read(max(0.0, deadline - time.monotonic())):
            pass
        return self._pid

    @property
    def pid(self) -> int | None:
        return self.wait_for_pid(READY_SECONDS)

    def poll(self) -> int | None:
        while self.returncode is None and self._read(0):
            pass
        if self.returncode is None and self._ended and not self._exists():
            self.returncode = 255
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise subprocess.TimeoutExpired("worker", timeout)
            if self._ended:  # the worker outlived its monitor: nothing will tell us it ended
                time.sleep(0.01)
            else:
                self._read(0.5 if remaining is None else min(remaining, 0.5))
        return self.returncode


class Zygote:
    """The grader's handle on a zygote: the run's own (``control`` is its socket) or one found waiting."""

    def __init__(self, control: socket.socket | None = None, path: Path | None = None):
        self.control, self.path = control, path

    @classmethod
    def start(cls, env: dict, cache_folder: Path | None, preload: list[str]) -> Zygote | None:
        """Start the run's zygote; it keeps listening after the run when there is a cache folder."""
        if not supported():
            return None
        path = socket_path(env, cache_folder) if cache_folder is not None and idle_seconds() > 0 else None
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except OSError:  # a platform without sequenced-packet Unix sockets
            return None
        try:
            if single_threaded():  # a fork of this command, detached at once (no child left to reap)
                child = os.fork()
                if child == 0:
                    try:
                        if os.fork() == 0:
                            become_zygote(theirs, path, preload, env)
                    finally:
                        os._exit(0)
                os.waitpid(child, 0)
            else:
                subprocess.Popen(
                    [sys.executable, "-m", "grader.launch", str(theirs.fileno()), str(path or ""), *preload],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    pass_fds=(theirs.fileno(),), start_new_session=True, env=env, close_fds=True)
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        return cls(control=ours)

    @classmethod
    def find(cls, env: dict, cache_folder: Path | None) -> Zygote | None:
        """A zygote an earlier run left for these settings, if one listens (a socket file nobody
        listens on is removed)."""
        if not supported() or cache_folder is None or idle_seconds() <= 0:
            return None
        path = socket_path(env, cache_folder)
        if path is None or not path.exists():
            return None
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as probe:
                probe.connect(str(path))
        except ConnectionRefusedError:
            path.unlink(missing_ok=True)
            return None
        except OSError:
            return None
        return cls(path=path)

    def fork(self, request: dict, fds: list[int]) -> ForkedProcess | None:
        """Ask for a worker on ``fds`` (request, answer and output pipes). The run's own zygote answers
        when it has imported JAX; a found one must say the pid at once, or None is returned."""
        ours, theirs = socket.socketpair()
        message = json.dumps(request).encode()
        try:
            if self.control is not None:
                socket.send_fds(self.control, [message], fds + [theirs.fileno()])
            else:
                with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
                    conn.settimeout(FOUND_SECONDS)
                    conn.connect(str(self.path))
                    socket.send_fds(conn, [message], fds + [theirs.fileno()])
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        process = ForkedProcess(ours)
        if self.control is None and process.wait_for_pid(FOUND_SECONDS) is None:
            ours.close()
            return None
        return process

    def close(self) -> None:
        """End the run's use of its zygote (which then stays or exits, see the module's docstring)."""
        if self.control is not None:
            self.control.close()
            self.control = None


@dataclass
class Started:
    """A worker process and the grader's ends of its pipes."""

    proc: subprocess.Popen | ForkedProcess
    requests: int  # write end
    answers: int  # read end
    output: int  # read end: the worker's stdout and stderr


def start_worker(compile_cache: str | None, zygote: Zygote | None = None) -> Started:
    """A worker forked by ``zygote``, or (without one, or if it cannot fork) ``python -m grader.worker``."""
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    out_r, out_w = os.pipe()
    env = worker_env()
    proc = None
    if zygote is not None:
        proc = zygote.fork({"compile_cache": compile_cache or "", "cwd": os.getcwd(), "env": env},
                           [req_r, resp_w, out_w])
    if proc is None:
        proc = subprocess.Popen(
            [sys.executable, "-m", "grader.worker", str(req_r), str(resp_w), compile_cache or ""],
            stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, pass_fds=(req_r, resp_w),
            start_new_session=True, env=env, close_fds=True,
        )
    for fd in (req_r, resp_w, out_w):
        os.close(fd)
    return Started(proc, req_w, resp_r, out_r)


def learner_compile_cache(cache_folder: Path | None) -> str | None:
    return str(cache_folder / "jax") if cache_folder is not None else None


@dataclass
class Launch:
    """Where a run's workers come from: a zygote an earlier run left (for the learner's worker only)
    and the run's own zygote; either may be None (a worker then starts afresh)."""

    found: Zygote | None = None
    own: Zygote | None = None
    learner: Started | None = None  # the learner's worker, started ahead

    @classmethod
    def prepare(cls, reference: Path, cache_folder: Path | None) -> Launch:
        """Find a waiting zygote, or start the run's own, and ask it for the learner's worker: all this
        as early as possible, so that it imports JAX while the grader loads the problem and draws
        inputs. ``reference`` is the reference's file."""
        env = worker_env()
        launch = cls(found=Zygote.find(env, cache_folder))
        if launch.found is None:
            try:
                preload = imports_of(reference.read_text())
            except OSError:
                preload = []
            launch.own = Zygote.start(env, cache_folder, preload)
        launch.learner = start_worker(learner_compile_cache(cache_folder), launch.found or launch.own)
        return launch

    def take_learner(self) -> Started | None:
        started, self.learner = self.learner, None
        return started

    def close(self) -> None:
        """End the run's use of its zygote; a learner's worker started ahead and never used sees its
        request pipe close, and exits."""
        if self.learner is not None:
            for fd in (self.learner.requests, self.learner.answers, self.learner.output):
                os.close(fd)
            self.learner = None
        if self.own is not None:
            self.own.close()


def stop(env: dict, cache_folder: Path) -> bool:
    """Stop the zygote waiting for runs with these settings, if there is one (benchmarks and tests use
    this to measure cold runs); whether one was there."""
    path = socket_path(env, cache_folder) if supported() else None
    if path is None or not hasattr(socket, "SO_PEERCRED"):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
            conn.connect(str(path))
            pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                             struct.calcsize("3i")))
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return False
    for _ in range(200):
        if not path.exists():
            return True
        time.sleep(0.01)
    return True


# -- the zygote ----------------------------------------------------------------------------------------


def main() -> None:
    """``python -m grader.launch CONTROL_FD SOCKET_PATH PRELOAD...`` (SOCKET_PATH empty: keep none)."""
    run(socket.socket(fileno=int(sys.argv[1])), Path(sys.argv[2]) if sys.argv[2] else None, sys.argv[3:])


def single_threaded() -> bool:
    """Whether this process has a single thread (Linux). Only such a process is forked to make a zygote:
    a thread the child would not have might hold a lock the child needs (NumPy's import alone starts
    BLAS threads)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def become_zygote(control: socket.socket, path: Path | None, preload: list[str], env: dict) -> None:
    """Turn a fork of the command, made before it imported anything heavy, into the zygote that
    ``python -m grader.launch`` would be, less a Python start: a session of its own, ``env``, nothing
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
        for fd, name, errors in ((1, "stdout", sys.stdout.errors), (2, "stderr", "backslashreplace")):
            stream = io.TextIOWrapper(open(fd, "wb", buffering=0, closefd=False), encoding=sys.stdout.encoding,
                                      errors=errors, newline="\n", write_through=True)
            setattr(sys, name, stream)
            setattr(sys, f"__{name}__", stream)
        run(control, path, preload)
    finally:
        os._exit(1)


def run(control: socket.socket, path: Path | None, preload: list[str]) -> None:
    """The zygote: import, then fork a worker per request (see the module's docstring); never returns."""
    listener = listen(path) if path is not None else None
    inode = os.stat(path).st_ino if listener is not None else None

    def terminate(signum, frame):
        if listener is not None and still_ours(path, inode):
            path.unlink(missing_ok=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, terminate)

    import jax  # noqa: F401
    import jax.numpy  # noqa: F401
    import numpy  # noqa: F401

    from grader import worker  # noqa: F401

    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  (a worker imports it again, and reports what goes wrong)
            pass

    gc.freeze()  # what was imported stays out of the workers' collections, its pages shared
    idle = idle_seconds()
    last = time.monotonic()
    while True:
        reap()
        sockets = [s for s in (control, listener) if s is not None]
        ready = select.select(sockets, [], [], 1.0)[0]
        if control in ready and not serve_one(control, (control, listener)):
            control.close()  # the run is over
            control = None
            last = time.monotonic()
        if listener in ready:
            try:
                conn, _ = listener.accept()
            except OSError:
                conn = None
            if conn is not None:
                with conn:
                    if same_user(conn):
                        serve_one(conn, (control, listener))
                last = time.monotonic()
        if control is None and (listener is None or time.monotonic() - last > idle
                                or not still_ours(path, inode)):
            break
    if listener is not None and still_ours(path, inode):
        path.unlink(missing_ok=True)
    reap()
    os._exit(0)


def listen(path: Path) -> socket.socket | None:
    """A socket listening at ``path``, or None if a live zygote already listens there."""
    for _ in range(2):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.bind(str(path))
            sock.listen(16)
            return sock
        except OSError:
            sock.close()
        try:  # a file is there: a live zygote's (leave it be) or a stale one's (replace it)
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as probe:
                probe.connect(str(path))
            return None
        except OSError:
            path.unlink(missing_ok=True)
    return None


def still_ours(path: Path, inode: int | None) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def same_user(conn: socket.socket) -> bool:
    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the socket's folder is private to this user anyway
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid == os.getuid()


def reap() -> None:
    """Collect the monitors that have ended."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve_one(sock: socket.socket, close_in_child) -> bool:
    """Fork the worker one message asks for; False when the other side has closed."""
    try:
        message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 4)
    except OSError:
        return False
    if not message:
        for fd in fds:
            os.close(fd)
        return False
    try:
        request = json.loads(message)
        if len(fds) == 4:
            fork_worker(request, fds, (*close_in_child, sock))
    except Exception:  # noqa: BLE001  (a malformed request: the asker sees its worker never start)
        pass
    finally:
        for fd in fds:
            os.close(fd)
    return True


def fork_worker(request: dict, fds: list[int], close_in_child) -> None:
    """Fork a monitor, which forks the worker, says its pid, waits for it and says its exit status."""
    req_fd, resp_fd, out_fd, status_fd = fds
    if os.fork():
        return
    try:  # the monitor
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the zygote's handler is not for its children
        for sock in close_in_child:
            if sock is not None:
                sock.close()
        pid = os.fork()
        if pid == 0:
            os.close(status_fd)
            become_worker(request, req_fd, resp_fd, out_fd)
        for fd in (req_fd, resp_fd, out_fd):
            os.close(fd)
        os.write(status_fd, f"pid {pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        os.write(status_fd, f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
    finally:
        os._exit(0)


def become_worker(request: dict, req_fd: int, resp_fd: int, out_fd: int) -> None:
    """Turn this fresh fork into a worker, as ``python -m grader.worker`` would start."""
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.path[0] = request["cwd"]
        sys.argv = [sys.argv[0]]
        import numpy

        numpy.random.seed()  # a fresh global seed, as a fresh process would have

        from grader import worker

        worker.serve(req_fd, resp_fd, request["compile_cache"])
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exc()
    finally:
        os._exit(1)


if __name__ == "__main__":
    main()
