"""The monitor: the grader's process that starts one worker, reports on it and ends it.

Forked by a zygote (see :mod:`grader.sandbox.zygote`) or started afresh as ``python -m grader.sandbox.monitor``,
it confines itself (:func:`grader.sandbox.isolation.confine`) when the worker will run learner code and the
kernel allows it, forks the worker, tells the grader the worker's pid and how it is isolated, and then waits:
when the worker ends it says its exit status; when the grader goes away or asks it to, it kills the worker.
A confined worker is process 1 of its PID namespace, so killing it ends everything it started; an
unconfined one is a session leader whose monitor is a subreaper, killing whatever is left below it.

Where the kernel refuses the namespaces and the grader runs as root (an autograder's container), a
worker for learner code is not left root: it becomes an unprivileged user (:mod:`grader.sandbox.users`),
with the limits and a private ``TMPDIR``; what it leaves is removed after it. It is told as isolation
``user``.

What the monitor tells the grader, one line each on its status socket: ``pid PID ISOLATION``, ``refused
WHY``, ``limit WHY`` (it ended the worker for a limit no mount sets), ``exit STATUS``; what the grader tells
it: ``kill`` (:class:`grader.sandbox.pool.Worker` reads and writes the other end).
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import socket
import sys

from grader.sandbox import users

PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 36, 1, 38
WATCH_SECONDS = 0.5  # how often an unconfined worker's temporary files are counted


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
                ids = users.confined_ids(request["env"])
                isolation.confine([request["compile_cache"]] if request["compile_cache"] else [], request["visible"],
                                  request["hidden"], request["cwd"], ids, request["path"])
                mode = "namespaces"
            else:
                _prctl(PR_SET_CHILD_SUBREAPER, 1)  # what the worker leaves behind comes back here, to be killed
                if request["confine"] and users.confined_ids(request["env"]) is not None:
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
        user = users.learner_user(request["env"], pid) if mode == "user" else None
        own = user is not None and user[0] >= users.LEARNER_UIDS[0]  # (a shared user's files are not this worker's alone)
        code = _watch(pid, status, (lambda: users.over_temporary_limit(user[0])) if own else None)
        if mode != "namespaces":
            _kill_descendants()
        if own:  # a user of its own: nothing of it outlives the worker
            users.remove_owned(user[0])
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

            uid, gid = users.learner_user(request["env"], os.getpid())
            if uid >= users.LEARNER_UIDS[0]:  # a user of its own: a temporary folder of its own too
                users.remove_owned(uid)  # whatever an earlier worker of that uid (another pid's) may have left
                folder = users.private_tmp(uid)
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
    """None where learner code can be confined here, as the user :func:`grader.sandbox.users.confined_ids` names, else why not
    (one sentence). Forks twice: call it before any thread starts."""
    from grader.sandbox import isolation

    try:
        return isolation.probe(users.confined_ids(env))
    except isolation.Refused as exc:
        return exc.strerror


def main() -> None:
    """``python -m grader.sandbox.monitor REQUEST_JSON REQ RESP OUT STATUS``: a monitor started afresh."""
    request = json.loads(sys.argv[1])
    req_fd, resp_fd, out_fd, status_fd = map(int, sys.argv[2:6])
    monitor(request, req_fd, resp_fd, out_fd, status_fd, why_not_confined(request["env"]) if request["confine"] else None)


if __name__ == "__main__":
    main()
