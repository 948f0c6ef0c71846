"""`grade <problem> --file F --json` run as a command, and its one verdict read: what the notebook's
``check()``, `grade batch` and the Gradescope autograder grade through.

The command runs in a process group of its own, its output read with a bound, for at most a time limit
(or until a batch is stopped); then whatever is left of its group is killed. An interrupted caller (Ctrl-C
in a notebook's kernel) first asks it to stop as Ctrl-C would, so that it ends its workers.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from grader.core.exits import Exit
from grader.core.launch import python_command

VERDICT_CAP = 2 << 20  # bytes of a command's stdout kept (`--json` prints less than 1 MiB)
STDERR_KEEP = 4096  # bytes of a command's stderr kept, from its end
DRAIN_SECONDS = 1.0  # for the command's pipes to close once it has exited
INTERRUPT_GRACE_SECONDS = 5.0  # after an interrupted caller asks `grade` to stop, before it is killed


@dataclass(frozen=True)
class Finished:
    """What one command did: its exit code (None if it was stopped), its stdout (at most VERDICT_CAP bytes;
    ``overflow`` if it printed more) and the end of its stderr."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool = False
    interrupted: bool = False
    overflow: bool = False

    @property
    def last_said(self) -> str | None:
        """The last line of its stderr, if any."""
        said = self.stderr.decode(errors="replace").strip().splitlines()
        return said[-1] if said else None


def grade_argv(slug: str, file: Path, *options: str, program: list[str] | None = None) -> list[str]:
    """The command line that grades ``file`` and prints its verdict as one JSON object."""
    return [*(program or python_command("grader.cli")), slug, "--file", str(file), "--json", *options]


def run_command(argv: list[str], seconds: float, stop: threading.Event | None = None, env: dict | None = None,
                cwd: Path | None = None) -> Finished:
    """Run ``argv`` in a process group of its own, reading its output bounded, for at most ``seconds``
    (or until ``stop`` is set); then kill whatever is left in its group."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            process_group=0, env=env, cwd=cwd)
    exited = os.pidfd_open(proc.pid)  # readable once it has exited; it stays unreaped, its group held
    out, err = bytearray(), bytearray()
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    poller = select.poll()  # (select() cannot wait on descriptors numbered 1024 and up: many jobs)
    for fd in (*streams, exited):
        poller.register(fd, select.POLLIN)
    overflow = timed_out = interrupted = False
    drain_until = None
    try:
        while streams or drain_until is None:
            now = time.monotonic()
            if stop is not None and stop.is_set():
                interrupted = True
                break
            if now >= started + seconds:
                timed_out = True
                break
            if drain_until is not None and now >= drain_until:
                break  # something the command started holds its pipes: what it printed is in
            for fd, _ in poller.poll(200):
                if fd == exited:
                    poller.unregister(exited)
                    drain_until = time.monotonic() + DRAIN_SECONDS
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    poller.unregister(fd)
                    del streams[fd]
                elif streams[fd] is out:
                    room = VERDICT_CAP - len(out)
                    overflow = overflow or len(chunk) > room
                    out += chunk[:max(room, 0)]
                else:
                    err[:] = (err + chunk)[-STDERR_KEEP:]
    except BaseException:  # the caller was interrupted: `grade` ends its workers as on Ctrl-C
        _signal_group(proc.pid, signal.SIGINT)
        try:
            proc.wait(INTERRUPT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        raise
    finally:
        _signal_group(proc.pid, signal.SIGKILL)  # the group outlives its leader until it is reaped
        proc.wait()
        os.close(exited)
        proc.stdout.close()
        proc.stderr.close()
    return Finished(None if timed_out or interrupted else proc.returncode, bytes(out), bytes(err),
                    time.monotonic() - started, timed_out, interrupted, overflow)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


@dataclass(frozen=True)
class Graded:
    """A grading run as a command: the object it printed (None where it printed none), and how it ended."""

    verdict: dict | None
    done: Finished

    @property
    def graded(self) -> bool:
        """Whether the object is a verdict on the file (not a usage error's, which says nothing was graded)."""
        return self.verdict is not None and self.done.returncode in (Exit.OK, Exit.FAILED)

    def why_not(self, said: bool = True) -> str:
        """One sentence: why there is no verdict on the file; where ``said``, with the last line of the
        command's stderr (for the learner's own machine or the instructor, not a student on a platform)."""
        done = self.done
        if done.timed_out:
            return f"grading did not end within {done.seconds:.0f} s"
        if done.interrupted:
            return "grading was stopped"
        if self.verdict is not None:  # a usage error, or a broken problem
            return f"grade: {self.verdict.get('message')}"
        last = done.last_said if said else None
        return f"grade ended without a verdict (exit status {done.returncode})" + (f": {last}" if last else "")


def grade(argv: list[str], seconds: float, stop: threading.Event | None = None, env: dict | None = None,
          cwd: Path | None = None) -> Graded:
    """Run a `grade ... --json` command line (see :func:`grade_argv`) and read its one JSON object (none
    where it was stopped or printed more than a verdict can be)."""
    from grader.render import report

    done = run_command(argv, seconds, stop, env, cwd)
    return Graded(None if done.returncode is None or done.overflow else report.read_verdict(done.stdout), done)
