"""Run code in a worker process, with limits, and talk to it (the grader's side of the boundary)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from grader import protocol
from grader.launch import READY_SECONDS, Started, Zygote, start_worker

OUTPUT_KEEP = 4096  # bytes of printed output kept from each end


class NotAcknowledged(RuntimeError):
    """A request sent with ``acknowledge`` (loading a trusted module, say) was answered with an error."""


class WorkerFailure(Exception):
    """The worker could not answer: it timed out, died, or broke the protocol."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind  # "timeout", "memory", "crash"
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


class Worker:
    """One worker process. ``request`` sends a message; ``receive`` waits for the answer."""

    def __init__(self, *, compile_cache: str | None = None, zygote: Zygote | None = None,
                 started: Started | None = None):
        """A worker ``started`` ahead, or one started now (forked by ``zygote`` when there is one)."""
        started = started or start_worker(compile_cache, zygote)
        self.proc, self._req_w, self._resp_r = started.proc, started.requests, started.answers
        out_r = started.output
        self.output = Output()
        self._drain = threading.Thread(target=self._read_output, args=(out_r,), daemon=True)
        self._drain.start()
        self.ready = False
        self.backend = None
        self._acks: list[str] = []  # requests whose "ok" replies come before any other answer

    def _read_output(self, fd: int) -> None:
        with os.fdopen(fd, "rb", buffering=0) as stream:
            while chunk := stream.read(65536):
                self.output.add(chunk)

    def request(self, header: dict, arrays: list[np.ndarray] = (), acknowledge: str | None = None) -> None:
        """Send a request. With ``acknowledge`` (what it does, for an error message), its reply is not
        returned by ``receive`` but checked there first: anything but "ok" raises NotAcknowledged. So a
        module can be loaded without waiting, and its calls sent right behind it."""
        specs, payloads = protocol.pack_arrays(list(arrays))
        try:
            protocol.write_message(self._req_w, dict(header, arrays=specs), payloads)
        except (BrokenPipeError, OSError):
            pass  # the worker died; receive() says how
        if acknowledge:
            self._acks.append(acknowledge)

    def receive(self, timeout: float) -> tuple[dict, list]:
        if not self.ready:  # importing JAX is not the graded code's time: it gets its own allowance
            self.ready = True
            header, _ = self._receive(max(timeout, READY_SECONDS))
            if header.get("op") != "ready":
                self.kill()
                raise WorkerFailure("crash", "the worker did not start properly")
            self.backend = header.get("backend")
        while self._acks:
            what = self._acks.pop(0)
            header, _ = self._receive(max(timeout, READY_SECONDS))
            if not header.get("ok"):
                err = header.get("error", {})
                raise NotAcknowledged(f"{what} failed: {err.get('type')}: {err.get('message')}\n"
                                      f"{err.get('traceback', '')}")
        return self._receive(timeout)

    def _receive(self, timeout: float) -> tuple[dict, list]:
        deadline = time.monotonic() + timeout
        remaining = timeout
        while remaining > 0:
            ready, _, _ = select.select([self._resp_r], [], [], remaining)
            if ready:
                try:
                    return protocol.read_message(self._resp_r)
                except EOFError:
                    raise self._death() from None
                except protocol.ProtocolError as exc:
                    self.kill()
                    raise WorkerFailure("crash", f"the worker sent a malformed answer ({exc})") from None
            remaining = deadline - time.monotonic()
        self.kill()
        raise WorkerFailure("timeout", f"no answer within {timeout:.0f} s")

    def _death(self) -> WorkerFailure:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        self._drain.join(timeout=1)
        printed = self.output.text()
        if any(sign in printed for sign in ("bad_alloc", "MemoryError", "RESOURCE_EXHAUSTED", "Out of memory")):
            return WorkerFailure("memory", "the process ran out of memory")
        if self.proc.pid is None:
            return WorkerFailure("crash", "the worker could not start: the process that forks workers "
                                          "ended first; does `python -c 'import jax'` work?")
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            if -code == signal.SIGKILL:
                return WorkerFailure("memory", f"the process was killed ({name}), most likely for using too much memory")
            return WorkerFailure("crash", f"the process died on signal {name}")
        return WorkerFailure("crash", f"the process exited with status {code} before answering "
                                      "(does the code call sys.exit or os._exit?)")

    def kill(self) -> None:
        """End the worker and everything it started: SIGTERM, then SIGKILL for whatever ignores it."""
        pid = self.proc.pid  # None if a zygote never forked the worker
        if pid is not None and self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 0.5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        try:
            if pid is not None:
                os.killpg(pid, signal.SIGKILL)  # children left behind in the group
        except (ProcessLookupError, PermissionError):
            pass
        for fd in (self._req_w, self._resp_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self._req_w = self._resp_r = -1

    def close(self) -> None:
        """Ask the worker to quit; kill it if it does not (a stray thread must not keep us waiting)."""
        if self.proc.poll() is None and self._req_w >= 0:
            self.request({"op": "quit"})
            try:
                self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        self._drain.join(timeout=1)
