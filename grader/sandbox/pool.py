"""Worker processes, from the grader's side: each one started, limited, talked to and ended by one owner.

A worker is started by a *monitor* (:mod:`grader.sandbox.monitor`), a small process of the grader's, forked by
a zygote (:mod:`grader.sandbox.zygote`) or started afresh as ``python -m grader.sandbox.monitor``: it confines
the worker where the kernel allows it, tells the grader the worker's pid and how it is isolated, says when
the worker ends, and kills it when told or when the grader goes away.

:class:`Worker` owns one such process from start to end (a context manager): it sends requests built by
:mod:`grader.sandbox.operations` and checks every reply, which is untrusted input.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field

from grader.core.launch import python_command
from grader.sandbox import operations, protocol
from grader.sandbox.config import worker_env
from grader.sandbox.isolation import import_path

READY_SECONDS = 120.0  # for a worker to start and import JAX
OUTPUT_KEEP = 4096  # bytes of printed output kept from each end


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
    """One worker process, from start to end. ``request`` sends a request (built by
    :mod:`grader.sandbox.operations`); ``receive`` waits for a reply and checks it
    (:func:`grader.sandbox.operations.parse_reply`); ``kill`` ends it and everything it started."""

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
                    [*python_command("grader.sandbox.monitor"), json.dumps(spec.request()), *map(str, fds)],
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
                self.returncode = 255  # the monitor died: the worker went with it (see become_worker())
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

    def receive(self, timeout: float, max_bytes: int, expect: str | tuple[str, ...],
                ready_seconds: float = READY_SECONDS) -> operations.Reply:
        """The next reply, checked to answer the operation ``expect`` names (see
        :func:`grader.sandbox.operations.parse_reply`), with at most ``max_bytes`` of array data. The first call also waits for the worker to start
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

    def _receive(self, timeout: float, max_bytes: int, expect: str | tuple[str, ...]) -> operations.Reply:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerFailure("timeout", f"no answer within {timeout:.0f} s")
            if select.select([self._resp_r], [], [], remaining)[0]:
                break
        try:
            return operations.parse_reply(*protocol.read_message(self._resp_r, max_payload=max_bytes), expect)
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
            self.request(*operations.quit())
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
