"""`grade` run as a command, the one place that builds its command line and runs it: `grade <problem> --file F
--json` and its one report read back (what the notebook's ``check()``, `grade batch` and the Gradescope
autograder grade through), `grade check <problem> --json` (a whole checkout's `grade check`), and the
learner's own `grade <problem>` on the terminal (`grade watch`).

A command whose output is read runs in a process group of its own, its output read with a bound, for at
most a time limit (or until a batch is stopped); then whatever is left of its group is killed. An
interrupted caller (Ctrl-C in a notebook's kernel) first asks it to stop as Ctrl-C would, so that it ends
its workers. A command on the terminal gets Ctrl-C from it too; it is asked again, then killed, if it has
not ended a few seconds later.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.core.exits import Exit
from grader.core.launch import python_command

if TYPE_CHECKING:
    from grader.core.verdict_report import Report

VERDICT_CAP = 2 << 20  # bytes of a command's stdout kept (`--json` prints less than 1 MiB)
STDERR_KEEP = 4096  # bytes of a command's stderr kept, from its end
DRAIN_SECONDS = 1.0  # for the command's pipes to close once it has exited
INTERRUPT_GRACE_SECONDS = 5.0  # after an interrupted caller asks `grade` to stop, before it is killed
STOP_SECONDS = 5.0  # for a `grade` on the terminal to end after Ctrl-C before it is killed


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


def command(*words: str, program: list[str] | None = None) -> list[str]:
    """The command line of `grade <words>`: ``program`` (default: this Python's ``-m grader.cli``) then them."""
    return [*(program or python_command("grader.cli")), *words]


def grade_argv(slug: str, file: Path, *options: str, program: list[str] | None = None) -> list[str]:
    """The command line that grades ``file`` and prints its verdict as one JSON object."""
    return command(slug, "--file", str(file), "--json", *options, program=program)


def grade_program() -> list[str]:
    """The command that runs `grade` as the user typed it, where it can be run again from here (so that the
    commands its reports print are the ones they type), else this Python's ``-m grader.cli``."""
    from grader.render import report

    words = report.program()
    ran = os.path.basename(sys.argv[0]) if sys.argv else ""
    if words == ["grade"] and (ran != "grade" or not shutil.which("grade")):  # not run as `grade`
        return python_command("grader.cli")
    return words


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


def run_on_terminal(argv: list[str]) -> int:
    """Run ``argv`` on this terminal (its output as it prints it) until it exits: its exit code. Interrupted
    (Ctrl-C, which it had too if it came from the terminal, or a signal made KeyboardInterrupt), it is asked
    to stop as Ctrl-C would, then killed if it has not ended a few seconds later."""
    child = subprocess.Popen(argv)
    try:
        return child.wait()
    except KeyboardInterrupt:
        for sig in (None, signal.SIGINT, signal.SIGKILL):
            if sig is not None and child.poll() is None:
                child.send_signal(sig)
            try:
                child.wait(STOP_SECONDS / 2)
                break
            except subprocess.TimeoutExpired:
                continue
            except KeyboardInterrupt:  # a second Ctrl-C: stop waiting politely
                continue
        raise


@dataclass(frozen=True)
class Graded:
    """A grading run as a command: the report it printed (None where it printed none), and how it ended."""

    verdict: Report | None
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
            return f"grade: {self.verdict.message}"
        last = done.last_said if said else None
        return f"grade ended without a verdict (exit status {done.returncode})" + (f": {last}" if last else "")


def grade(argv: list[str], seconds: float, stop: threading.Event | None = None, env: dict | None = None,
          cwd: Path | None = None) -> Graded:
    """Run a `grade ... --json` command line (see :func:`grade_argv`) and read its one report (none where it
    was stopped, printed more than a verdict can be, or printed no report)."""
    from grader.core.verdict_report import InvalidReport, Report

    done = run_command(argv, seconds, stop, env, cwd)
    if done.returncode is None or done.overflow:
        return Graded(None, done)
    try:
        return Graded(Report.from_json(done.stdout), done)
    except InvalidReport:
        return Graded(None, done)
