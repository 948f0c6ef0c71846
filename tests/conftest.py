"""Shared fixtures: run the ``grade`` command in-process, from the checkout, with a private cache."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from grader import cli
from grader.instructor import check
from grader.problem import problems
from grader.problem.checkout import slugs
from grader.sandbox import pool, zygote
from grader.sandbox.config import worker_env

# Tests that run JAX in this process compile as the workers do (several times faster than XLA's defaults).
os.environ["XLA_FLAGS"] = worker_env()["XLA_FLAGS"]

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = {slug: ROOT / "solutions" / slug / f"{slug}.py"
             for slug in ("t5_relative_pos", "rmsnorm", "t5_relative_bias", "mini_t5_forward")}


# The fast lane, `pytest -m fast`: every test starts no grading process (no worker, no subprocess, no fork)
# unless it is marked `grading` or lies in one of these files, whose tests grade. A test of the lane that
# starts one fails, saying so. Run the lane after every change; the whole suite before a change lands.
GRADING_MODULES = {"test_batch", "test_class_integrity", "test_class_refused", "test_feedback", "test_handout", "test_hostile",
                   "test_parameters", "test_precision", "test_check", "test_trust", "test_zygote"}


def pytest_configure(config):
    config.addinivalue_line("markers", "fast: starts no grading process (the lane `pytest -m fast`)")
    config.addinivalue_line("markers", "grading: starts a grading process (not in the fast lane)")


# Modules whose tests grade one problem each (its name first in the test's parameters, `slug` or `problem`)
# in the session's cache: with pytest-xdist they run with that problem's other tests and its `grade check`
# (tests/instructor/test_check.py), so its reference outputs and compiled programs, computed in one test
# process, serve them all.
BY_PROBLEM = {"test_precision", "test_parameters"}
SLUGS = sorted(slugs(ROOT), key=len, reverse=True)  # the longest first: mini_t5_forward before t5_forward


def group_of(nodeid: str) -> tuple[str, str | None]:
    """The group of tests one test process runs whole, and its problem where it is one: a problem's
    `grade check` (tests/instructor/test_check.py: a class each) with its tests of BY_PROBLEM, or a
    module."""
    path, _, rest = nodeid.partition("::")
    module = Path(path).stem
    if module == "test_check" and "::" in rest:
        slug = rest.partition("::")[0].removeprefix("TestCheck_")
        return f"problem {slug}", slug
    ident = rest.partition("[")[2]
    slug = next((slug for slug in SLUGS if ident.startswith(slug)), None) if module in BY_PROBLEM else None
    return (f"problem {slug}", slug) if slug else (path, None)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: nothing without it
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadscope` with the groups of :func:`group_of` for scopes, in the order the test processes
    collect them (tests/conftest.py sorts them; pytest-xdist's `--dist loadgroup`, which would read marks,
    does not rename tests under pytest 9)."""
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)[0]

    config.option.loadscopereorder = False
    return ByGroup(config, log)


def time_limit(slug: str) -> float | None:
    try:
        return problems.load(ROOT, slug).problem_seconds
    except problems.ProblemError:  # its own tests say what is wrong
        return None


def pytest_collection_modifyitems(session, config, items):
    """The fast lane's marks; then the groups of :func:`group_of` longest first (guessed from the problems'
    time limits), so that no test process is left with a long one at the end; the fast lane last."""
    seconds = {slug: limit for slug in SLUGS if (limit := time_limit(slug))}
    guess: dict[str, float] = {}  # seconds, roughly, of each group
    checked = set()  # the problems whose check is counted in their group
    for item in items:
        module = getattr(getattr(item, "module", None), "__name__", "")
        graded = module in GRADING_MODULES or item.get_closest_marker("grading") is not None
        if not graded:
            item.add_marker(pytest.mark.fast)
        group, slug = group_of(item.nodeid)
        if module == "test_check":
            if slug not in checked:
                checked.add(slug)
                guess[group] = guess.get(group, 0.0) + check.cost(ROOT, slug) / 50
        elif slug in seconds:
            guess[group] = guess.get(group, 0.0) + 3 * (seconds[slug] / 90) ** 2
        else:
            guess[group] = guess.get(group, 0.0) + (3.0 if graded else 0.05)
    items.sort(key=lambda item: -guess[group_of(item.nodeid)[0]])  # stable: a group's tests keep their order


@pytest.fixture(autouse=True)
def fast_lane_starts_nothing(request, monkeypatch):
    """A test in the fast lane that starts a worker, a subprocess or a fork fails, saying so. (git, which
    finds a problem's untouched stub in milliseconds, is no grading process: it may run.)"""
    started = []
    if request.node.get_closest_marker("fast") is not None:
        def refuse(*args, **kwargs):
            started.append(True)
            raise AssertionError(f"{request.node.nodeid} is in the fast lane but starts a process: mark it "
                                 f"@pytest.mark.grading")

        popen = subprocess.Popen.__init__

        def git_only(self, argv, *args, **kwargs):
            if isinstance(argv, (list, tuple)) and argv and argv[0] == "git":
                return popen(self, argv, *args, **kwargs)
            refuse()

        monkeypatch.setattr(pool.Worker, "__init__", refuse)
        monkeypatch.setattr(subprocess.Popen, "__init__", git_only)
        monkeypatch.setattr(os, "fork", refuse)
    yield
    assert not started, f"{request.node.nodeid} is in the fast lane but starts a process: mark it @pytest.mark.grading"


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """Reference outputs and compiled code cached once for the whole test session, apart from the user's;
    the zygote the first run leaves serves the later ones, and is stopped at the end."""
    mp = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("grade-cache")
    mp.setenv("GRADE_CACHE_DIR", str(folder))
    yield folder
    zygote.stop(folder)
    mp.undo()


@pytest.fixture
def grade(capsys, monkeypatch):
    """``grade(*argv)`` -> (exit code, stdout, stderr), run from the checkout's root."""
    monkeypatch.chdir(ROOT)

    def run(*argv: str, cwd: Path | None = None):
        if cwd is not None:
            monkeypatch.chdir(cwd)
        code = cli.main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def grade_json(grade):
    """``grade_json(problem, *argv)`` -> (exit code, the single JSON object stdout holds)."""

    def run(problem: str, *argv: str):
        code, out, _ = grade(problem, "--json", *argv)
        return code, json.loads(out)  # fails unless stdout is exactly one JSON document

    return run


@pytest.fixture
def submission(tmp_path):
    """``submission(source)`` writes a learner module to a temporary file and returns its path."""

    def write(source: str, name: str = "t5_relative_pos.py") -> Path:
        path = tmp_path / name
        path.write_text(source)
        return path

    return write


def live_processes() -> set[int]:
    pids = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                pids.add(int(entry.name))
        except OSError:
            continue
    return pids


def kept_zygotes() -> set[int]:
    """The zygotes that stay between runs, as their records name them."""
    return {pid for record in zygote.base_folder().glob("*/*.pid")
            if (pid := zygote.registered_pid(record.parent, record.stem)) is not None}


def left_behind(before: set[int], folder: Path, seconds: float = 5.0) -> set[int]:
    """Processes of runs with the cache folder ``folder`` (they carry it in their environment) started
    since ``before`` and still alive after ``seconds`` at most, other than kept zygotes: what those runs
    left behind. Other processes on the machine do not count."""
    import time

    marker = f"GRADE_CACHE_DIR={folder}".encode()

    def ours(pid: int) -> bool:
        try:
            return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            return False

    deadline = time.monotonic() + seconds
    while True:
        extra = {pid for pid in live_processes() - before - kept_zygotes() if ours(pid)}
        if not extra or time.monotonic() > deadline:
            return extra
        time.sleep(0.05)


# `python -c IN_USER_NAMESPACE <args>` runs `python <args>` in a user namespace of its own, its ids mapped as
# ID_MAP says (a uid_map line, `{real}` standing for this process's uid; default: root and 65535 users),
# with namespaces refused inside unless REFUSE_NAMESPACES=0: an autograder's container that refuses them
# (as root), or an ordinary user's machine (ID_MAP="1000 {real} 1").
IN_USER_NAMESPACE = r"""
import ctypes, os, sys
refuse = os.environ.pop("REFUSE_NAMESPACES", "1") == "1"
ids = os.environ.pop("ID_MAP", "0 0 65536").replace("{real}", str(os.getuid()))
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
pid = os.fork()
if pid == 0:
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000):
        os._exit(97)
    os.write(ready_w, b"1")
    os.read(go_r, 1)
    if refuse:
        with open("/proc/sys/user/max_user_namespaces", "w") as f:
            f.write("0")
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
os.read(ready_r, 1)
for kind in ("uid", "gid"):
    with open(f"/proc/{pid}/{kind}_map", "w") as f:
        f.write(ids)
os.write(go_w, b"1")
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""
