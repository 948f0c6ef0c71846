"""The zygote process itself (see :mod:`grader.sandbox.zygote`, the grader's side): it says whether learner code
can be confined here, imports JAX, NumPy and the modules the reference imports, then forks a monitor
(:mod:`grader.sandbox.monitor`) for each request, from its run's socket or, when it stays for later runs of the
same checkout, from the socket it listens on, with its record (pid and start time) beside it.

Started as ``python -m grader.sandbox.zygote_process``, or forked from the command while it still has a single
thread (:func:`become_zygote`).
"""

from __future__ import annotations

import gc
import importlib
import io
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path

from grader.sandbox import monitor

IDLE_SECONDS = 600.0
FOUND_SECONDS = 3.0  # for a zygote found waiting to fork (it answers in milliseconds when healthy)


def idle_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("GRADE_WARM_SECONDS", IDLE_SECONDS)))
    except ValueError:
        return IDLE_SECONDS


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
    ``python -m grader.sandbox.zygote_process`` would be, less a Python start: a session of its own, ``env``, nothing
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
    refused = monitor.why_not_confined(dict(os.environ))
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
                monitor.monitor(request, *fds, refused)
            finally:
                os._exit(1)
        return True
    except Exception:  # noqa: BLE001  (a malformed request: the asker sees its worker never start)
        return False
    finally:
        for fd in fds:
            os.close(fd)


def main() -> None:
    """``python -m grader.sandbox.zygote_process CONTROL_FD FOLDER NAME PRELOAD...`` (FOLDER empty: keep none)."""
    run(socket.socket(fileno=int(sys.argv[1])), Path(sys.argv[2]) if sys.argv[2] else None, sys.argv[3], sys.argv[4:])


if __name__ == "__main__":
    main()
