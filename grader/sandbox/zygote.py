"""A process that imports JAX once and forks workers' monitors from there (see :mod:`grader.sandbox.monitor`):
the grader's side of it, and a run's workers (:class:`Launch`); the process itself is
:mod:`grader.sandbox.zygote_process`.

Starting Python and importing JAX costs a worker about a second of CPU, and a run has two workers (the
learner's and the reference's). So a run of `grade` starts one zygote, which first asks the kernel
whether learner code can be confined here (:func:`grader.sandbox.isolation.probe`, before any thread exists),
tells the run, then imports JAX, NumPy and the modules the reference imports, and forks a monitor per
worker. The zygote never loads graded code. The command line starts it before it imports anything
heavy itself: it forks the zygote from itself while it still has a single thread, and otherwise starts
``python -m grader.sandbox.zygote_process``.

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
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.launch import python_command
from grader.core.verdict import Isolation
from grader.sandbox import users
from grader.sandbox.config import worker_env
from grader.sandbox.pool import Spec, Worker
from grader.sandbox.zygote_process import (FOUND_SECONDS, become_zygote, idle_seconds, peer_pid, prepare_title,
                                           registered_pid, remove_files, single_threaded)

HELLO_SECONDS = 30.0  # for a zygote just started to say whether learner code can be confined


def supported() -> bool:
    return hasattr(socket, "SOCK_SEQPACKET") and hasattr(socket, "send_fds") and hasattr(os, "fork")


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
                    [*python_command("grader.sandbox.zygote_process"), str(theirs.fileno()), str(folder or ""), name,
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
    unconfined it gets none (see :mod:`grader.sandbox.monitor`), nor in a class's grading, where each file is
    graded once from a copy of its own."""
    from grader.problem.checkout import class_grading

    if folder is None or class_grading():
        return Spec(confine=True, visible=visible, hidden=hidden)
    key = hashlib.sha256(os.fsencode(os.path.abspath(learner) if learner else "")).hexdigest()[:16]
    cache = folder / "jax-learner" / key
    cache.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:  # learner code runs as an unprivileged user there (see :func:`users.confined_ids`)
        try:
            ids = users.confined_ids(worker_env())
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
        ``hidden``: what it must not read (:func:`grader.problem.checkout.hidden_from_learners`); ``learner``: the
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
        :mod:`grader.sandbox.users`) or not at all. As an unprivileged user, what the namespaces would hide is
        withheld from it by permissions before it starts (:func:`grader.sandbox.users.withhold`)."""
        if self.refused() is None:
            return Isolation.NAMESPACES
        self.learner.started()
        if self.learner.isolation != "user":
            return Isolation.NONE
        users.withhold(self.spec.hidden)
        return Isolation.USER

    @property
    def zygote(self) -> Zygote | None:
        """What the learner's workers are forked from."""
        return self.found or self.own

    def close(self) -> None:
        if self.own is not None:
            self.own.close()
        trim(self.spec.compile_cache)
        if self.learner.isolation == "user" and not users.own_learner_ids():
            # The user the workers shared: nothing of it outlives the run (a class is graded one at a time).
            ids = users.learner_user(worker_env())
            if ids is not None:
                users.remove_owned(ids[0], self.started if ids[0] == users.overflow_uid() else None)


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


