"""Where workers come from: the run's zygote, one an earlier run left, or a fresh start; and what is
kept between runs. Whichever way a worker starts, the verdict and the confinement are the same."""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import REFERENCE, ROOT
from grader.grading import engine
from grader.sandbox import isolation, zygote

CORRECT = REFERENCE["t5_relative_pos"].read_text()
WRONG = CORRECT + '''

_right = t5_relative_pos


def t5_relative_pos(seed, T, num_buckets, max_distance):
    return _right(seed, T, num_buckets, max_distance) + 1.0
'''


def run_grade(*argv, env):
    """The command as a learner runs it, in a process of its own: (exit code, the JSON verdict)."""
    done = subprocess.run([sys.executable, "-m", "grader.cli", *argv, "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, json.loads(done.stdout)


def wait_until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def zygotes(folder: Path, settle: float = 5.0) -> list[int]:
    """Pids of the processes a run with this cache folder left behind (a zygote is forked from the
    command or started afresh, so it is known by the environment it started with, not its command line).
    A process forked from one of them (a monitor still ending, on a loaded machine) is waited for, up to
    ``settle`` seconds; one still there then is counted: something the run left."""
    marker = f"GRADE_CACHE_DIR={folder}".encode()

    def listed() -> dict[int, int]:
        found = {}
        for entry in Path("/proc").iterdir():
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if marker in environ and stat[0] != "Z":
                found[int(entry.name)] = int(stat[1])  # its parent
        return found

    deadline = time.monotonic() + settle
    found = listed()
    while any(parent in found for parent in found.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
        found = listed()
    return sorted(found)


@pytest.fixture
def own_cache(tmp_path):
    """A cache folder of this test's own, with a zygote allowed to stay; whatever stays is stopped."""
    folder = tmp_path / "cache"
    env = dict(os.environ, GRADE_CACHE_DIR=str(folder), GRADE_WARM_SECONDS="120")
    yield folder, env
    zygote.stop(folder)


def test_a_run_leaves_a_zygote_that_the_next_run_uses(own_cache, tmp_path):
    folder, env = own_cache
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    learner = tmp_path / "t5_relative_pos.py"
    learner.write_text(CORRECT)
    code, report = run_grade("t5_relative_pos", "--file", learner, env=env)
    assert (code, report["status"]) == (0, "pass")
    first = zygotes(folder)
    assert len(first) == 1 and zygote.Zygote.find(folder) is not None
    # Forked from the command itself, before it imported anything heavy (no second Python start): its
    # environment block is the command's, not the one a fresh start is given (worker_env() adds this).
    assert b"PYTHONDONTWRITEBYTECODE=1" not in Path(f"/proc/{first[0]}/environ").read_bytes().split(b"\0")
    # What ps shows is what it is, not the command line of the run that forked it.
    assert Path(f"/proc/{first[0]}/cmdline").read_bytes().startswith(b"grade zygote (forks grade's workers; ends after")

    learner.write_text(WRONG)  # the learner edits the file and grades again: same zygote, honest verdict
    code, report = run_grade("t5_relative_pos", "--file", learner, env=env)
    assert (code, report["status"]) == (1, "fail")
    assert zygotes(folder) == first

    assert zygote.stop(folder)
    assert zygotes(folder) == [] and zygote.Zygote.find(folder) is None


def test_a_forked_worker_sees_this_run_not_the_zygote_s(own_cache, tmp_path):
    folder, env = own_cache
    probe = CORRECT + '\nimport os\nprint("probe", os.environ.get("LC_KATA_PROBE"), os.getcwd())\n'
    learner = tmp_path / "t5_relative_pos.py"
    learner.write_text(probe)
    run_grade("t5_relative_pos", "--file", learner, env=dict(env, LC_KATA_PROBE="first"))
    first = zygotes(folder)
    sub = ROOT / "problems"
    done = subprocess.run([sys.executable, "-m", "grader.cli", "t5_relative_pos", "--file", learner, "--json"],
                          cwd=sub, env=dict(env, LC_KATA_PROBE="second"), capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert f"probe second {sub}" in report["output"]
    assert len(first) == 1 and zygotes(folder) == first  # the worker came from the first run's zygote


def test_a_stale_record_is_replaced(own_cache):
    """A zygote killed without cleaning up leaves its socket and record: the next run starts afresh."""
    folder, env = own_cache
    code, report = run_grade("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"], env=env)
    [pid] = zygotes(folder)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: zygote.Zygote.find(folder) is None)
    assert zygote.Zygote.find(folder) is None  # the record names a process that is gone
    code, report = run_grade("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"], env=env)
    assert (code, report["status"]) == (0, "pass") and len(zygotes(folder)) == 1


def test_a_stopped_zygote_costs_one_short_wait_and_is_replaced(own_cache):
    folder, env = own_cache
    run_grade("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"], env=env)
    [stopped] = zygotes(folder)
    os.kill(stopped, signal.SIGSTOP)
    started = time.monotonic()
    code, report = run_grade("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"], env=env)
    assert (code, report["status"]) == (0, "pass")
    assert time.monotonic() - started < zygote.FOUND_SECONDS + 20
    wait_until(lambda: stopped not in zygotes(folder))
    assert len(zygotes(folder)) == 1  # the replacement


def test_a_changed_numerics_variable_gets_its_own_zygote_and_stops_the_old_one(own_cache):
    folder, env = own_cache
    run_grade("rmsnorm", "--file", REFERENCE["rmsnorm"], env=env)
    [first] = zygotes(folder)
    code, report = run_grade("rmsnorm", "--file", REFERENCE["rmsnorm"], env=dict(env, JAX_TRACEBACK_FILTERING="off"))
    assert (code, report["status"]) == (0, "pass")
    wait_until(lambda: first not in zygotes(folder))
    assert len(zygotes(folder)) == 1


def test_importing_jax_leaves_the_fingerprint_as_it_was():
    # JAX sets variables in its own process's environment when imported (TPU_SKIP_MDS_QUERY): a process
    # that has imported it must still find the zygote of a `grade` that has not.
    code = ("from grader.sandbox.fingerprint import fingerprint\n"
            "before = fingerprint()\n"
            "fingerprint.cache_clear()\n"
            "import jax.numpy\n"
            "print(before == fingerprint())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "True"


def test_without_a_warm_period_no_zygote_stays(tmp_path):
    folder = tmp_path / "cache"
    env = dict(os.environ, GRADE_CACHE_DIR=str(folder), GRADE_WARM_SECONDS="0")
    code, report = run_grade("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"], env=env)
    assert (code, report["status"]) == (0, "pass")
    for _ in range(100):
        if not zygotes(folder):
            break
        time.sleep(0.05)
    assert zygotes(folder) == []


@pytest.mark.parametrize("source, status", [(CORRECT, "pass"), (WRONG, "fail"),
                                            (CORRECT + "\nimport sys\nsys.exit(0)\n", "error")])
def test_workers_start_afresh_where_no_zygote_can_fork(grade_json, submission, monkeypatch, source, status):
    monkeypatch.setattr(zygote, "supported", lambda: False)
    code, report = grade_json("t5_relative_pos", "--file", submission(source))
    assert report["status"] == status and code == (0 if status == "pass" else 1)
    assert report["isolation"] == ("namespaces" if isolation.probe() is None else "none")


def test_hypothesis_runs_again_only_to_shrink_a_failure(grade_json, submission, monkeypatch):
    grade_json("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"])  # the drawn inputs are on disk now
    calls = []
    real = engine.run_generated
    monkeypatch.setattr(engine, "run_generated", lambda *a, **k: calls.append(k) or real(*a, **k))
    code, report = grade_json("t5_relative_pos", "--file", submission(CORRECT + "\n# edited\n"))
    assert (code, report["status"], calls) == (0, "pass", [])
    # Wrong only where T > 30, which no fixed example reaches: Hypothesis shrinks it to T = 31.
    late = CORRECT + '''
_right = t5_relative_pos


def t5_relative_pos(seed, T, num_buckets, max_distance):
    return _right(seed, T, num_buckets, max_distance) + (1.0 if T > 30 else 0.0)
'''
    code, report = grade_json("t5_relative_pos", "--file", submission(late))
    assert (code, report["status"]) == (1, "fail")
    assert calls == [{"draws": None}] and report["counterexample"]["inputs"]["T"] == 31  # the public draws, once


def test_the_command_flushes_its_verdict_before_its_quick_exit(tmp_path):
    env = dict(os.environ, GRADE_CACHE_DIR=str(tmp_path / "cache"), GRADE_WARM_SECONDS="0")
    learner = tmp_path / "t5_relative_pos.py"
    learner.write_text(WRONG)
    code, report = run_grade("t5_relative_pos", "--file", learner, env=env)
    assert (code, report["status"]) == (1, "fail") and report["counterexample"]["replay"]


def test_output_written_before_a_hang_reaches_the_report(own_cache, tmp_path):
    """A zygote forked from the command inherits its streams' buffering: its workers' must be unbuffered
    all the same, or what the learner printed before being stopped is lost."""
    folder, env = own_cache
    learner = tmp_path / "t5_relative_pos.py"
    learner.write_text(CORRECT + '''
import sys

print("printed", end="")
sys.stderr.write("written")


def t5_relative_pos(seed, T, num_buckets, max_distance):
    while True:
        pass
''')
    env = {name: value for name, value in env.items() if name != "PYTHONUNBUFFERED"}
    code, report = run_grade("t5_relative_pos", "--file", learner, "--call-time-limit", "2", env=env)
    assert (code, report["status"]) == (1, "timeout")
    assert "printed" in report["output"] and "written" in report["output"]


def test_the_zygote_keeps_nothing_the_command_inherited(own_cache):
    """A descriptor the command's parent leaked to it (here the write end of a pipe) is not held for the
    zygote's ten minutes: whoever reads that pipe sees it close when the command ends."""
    folder, env = own_cache
    read, write = os.pipe()
    done = subprocess.run([sys.executable, "-m", "grader.cli", "rmsnorm", "--file", REFERENCE["rmsnorm"], "--json"],
                          cwd=ROOT, env=env, capture_output=True, timeout=300, pass_fds=(write,))
    os.close(write)
    assert done.returncode == 0 and len(zygotes(folder)) == 1
    assert select.select([read], [], [], 10)[0] and os.read(read, 1) == b""
    os.close(read)


# A learner module that knows whether it is the first of the run's processes to load it: the first takes
# a lock on a file beside it (which the test creates; the module sees its folder read-only) and holds it
# until it exits.
SECOND_KNOWS = CORRECT + '''
import fcntl
import os

_lock = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "first.lock"))
try:
    fcntl.flock(_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    SECOND = False
except OSError:
    SECOND = True
_right = t5_relative_pos
'''


@pytest.fixture
def second_knows():
    """A learner's file and the lock beside it, in a folder any user may read: where the tests run as root,
    learner code runs as an unprivileged user of its own, and reads what such a user may."""
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)

    def write(tail: str):
        path = folder / "t5_relative_pos.py"
        path.write_text(SECOND_KNOWS + tail)
        (folder / "first.lock").write_text("")
        return path

    yield write
    shutil.rmtree(folder, ignore_errors=True)


def test_a_regrade_splits_the_inputs_between_two_workers(grade_json, submission, second_knows):
    """With the reference's outputs cached, its core runs a second worker with the learner's file: what
    both print is reported, and the second worker's answers are graded like the first's."""
    grade_json("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"])  # the reference's outputs are cached
    code, report = grade_json("t5_relative_pos", "--file", submission(CORRECT + '\nprint("loaded")\n'))
    assert (code, report["status"]) == (0, "pass")
    assert report["output"].count("loaded") == 2 and "second process" in report["output"]
    code, report = grade_json("t5_relative_pos", "--file", second_knows('''

def t5_relative_pos(seed, T, num_buckets, max_distance):
    return _right(seed, T, num_buckets, max_distance) + (1.0 if SECOND else 0.0)
'''))
    assert (code, report["status"]) == (1, "fail")


CANNOT_LOAD = 'if SECOND:\n    raise RuntimeError("only the first process may load this file")\n'
DIES_PARTWAY = '''
_calls = [0]


def t5_relative_pos(seed, T, num_buckets, max_distance):
    _calls[0] += 1
    if SECOND and _calls[0] > 1:  # the first answer comes; the process exits while computing the rest
        os._exit(3)
    return _right(seed, T, num_buckets, max_distance)
'''


@pytest.mark.parametrize("tail", [CANNOT_LOAD, DIES_PARTWAY], ids=["cannot load", "dies partway"])
def test_what_the_second_worker_leaves_unanswered_the_first_answers(grade_json, second_knows, tail):
    """A second worker that cannot load the file, or dies partway through its batch, costs nothing but
    time: its remaining cases run in the first worker."""
    grade_json("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"])
    code, report = grade_json("t5_relative_pos", "--file", second_knows(tail))
    assert (code, report["status"]) == (0, "pass") and report["examples_run"] == 24


def test_a_folder_where_the_socket_goes_costs_nothing_but_the_kept_zygote(own_cache):
    folder, env = own_cache
    (zygote.private_folder(folder) / f"{zygote.key()}.sock").mkdir()
    for _ in range(2):
        code, report = run_grade("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"], env=env)
        assert (code, report["status"]) == (0, "pass")
