"""Verdicts nobody can forge or corrupt: learner code is confined, what it sends back is checked, stale
state is never reused, and a failure seen once stays a failure.

Each hostile submission is the reference bucketing solution with one trick added, so that a pass could
only come from the trick.
"""

import ctypes
import json
import shutil
import tempfile
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import IN_USER_NAMESPACE, REFERENCE, ROOT, left_behind, live_processes
from grader.core.verdict_report import SCHEMA
from grader.problem import problems
from grader.sandbox import isolation, users

CORRECT = REFERENCE["t5_relative_pos"].read_text()
FAST = ("--call-time-limit", "4", "--time-limit", "60")
CONFINED = isolation.probe() is None
needs_namespaces = pytest.mark.skipif(not CONFINED, reason="this kernel refuses namespaces")

WRONG_TWICE_THEN_RIGHT = CORRECT + '''
_right = t5_relative_pos
_wrong_answers = [2]


def t5_relative_pos(seed, T, num_buckets, max_distance):
    import numpy as np

    out = np.asarray(_right(seed, T, num_buckets, max_distance))  # cannot be traced: runs eagerly, every call
    if T > 30 and _wrong_answers[0]:  # wrong on the first large input, twice; right ever after
        _wrong_answers[0] -= 1
        return out + 1.0
    return out
'''


def test_a_function_that_answers_differently_for_the_same_input_fails(grade_json, submission):
    code, report = grade_json("t5_relative_pos", "--file", submission(WRONG_TWICE_THEN_RIGHT))
    assert (code, report["status"]) == (1, "fail")
    assert "answered differently" in report["message"]
    assert report["counterexample"]["inputs"]["T"] > 30


# -- confinement ----------------------------------------------------------------------------------------

ATTACKS = CORRECT + '''
import os, signal, socket

_found = []
for path in (os.environ["GRADE_CACHE_DIR"], os.path.join("@ROOT@", "solutions")):
    try:
        with open(os.path.join(path, "forged.txt"), "w") as f:
            f.write("forged")
        _found.append("wrote " + path)
    except OSError:
        pass
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != os.getpid():
        _found.append("sees process " + entry)
        try:
            os.kill(int(entry), signal.SIGSTOP)
            _found.append("stopped " + entry)
        except OSError:
            pass
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
    _found.append("network")
except OSError:
    pass
print("FOUND", _found)
_right = t5_relative_pos


def t5_relative_pos(seed, T, num_buckets, max_distance):
    return _right(seed, T, num_buckets, max_distance) + (1.0 if "network" in _found else 0.0)
'''


@needs_namespaces
def test_confined_code_can_write_no_cache_see_no_process_and_reach_no_network(grade_json, submission,
                                                                               private_cache, monkeypatch):
    code, report = grade_json("t5_relative_pos", "--file", submission(ATTACKS.replace("@ROOT@", str(ROOT))))
    assert "FOUND" in report["output"]
    assert "sees process" not in report["output"] and "stopped " not in report["output"]  # process 1, alone
    assert (code, report["status"], report["isolation"]) == (0, "pass", "namespaces")
    # What it wrote, if anything, went to its private /tmp: nothing reached the cache or the checkout.
    assert not (private_cache / "forged.txt").exists() and not (ROOT / "solutions" / "forged.txt").exists()


@needs_namespaces
def test_a_setsid_daemon_does_not_outlive_the_run(grade_json, submission, private_cache):
    daemon = CORRECT + '''
import subprocess
subprocess.Popen(["setsid", "sleep", "600"])
subprocess.Popen(["sh", "-c", "sleep 600 &"])
'''
    before = live_processes()
    code, report = grade_json("t5_relative_pos", "--file", submission(daemon))
    assert (code, report["status"]) == (0, "pass")
    assert left_behind(before, private_cache) == set()


def in_other_pid_namespaces() -> set[int]:
    """Processes of this user in a PID namespace other than ours: confined workers and their children."""
    ours = os.readlink("/proc/self/ns/pid")
    found = set()
    for pid in live_processes():
        try:
            if os.readlink(f"/proc/{pid}/ns/pid") != ours:
                found.add(pid)
        except OSError:
            continue
    return found


@needs_namespaces
def test_ending_grade_with_a_signal_ends_the_learner_s_processes(submission, tmp_path):
    spinning = CORRECT + '''
import subprocess
subprocess.Popen(["sleep", "600"])


def t5_relative_pos(seed, T, num_buckets, max_distance):
    while True:
        pass
'''
    env = dict(os.environ, GRADE_CACHE_DIR=str(tmp_path / "cache"), GRADE_WARM_SECONDS="0")
    before = live_processes()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        confined_before = in_other_pid_namespaces()
        # With the signal's default action, as from a terminal: a suite run under `nohup` ignores SIGHUP,
        # and a `grade` started from it would rightly keep running.
        command = subprocess.Popen([sys.executable, "-m", "grader.cli", "t5_relative_pos", "--file",
                                    submission(spinning), "--call-time-limit", "300"], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
        deadline = time.monotonic() + 60
        while len(in_other_pid_namespaces() - confined_before) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # until the worker and its child run
        time.sleep(1)
        command.send_signal(sig)
        command.wait(timeout=30)
        assert left_behind(before, tmp_path / "cache", seconds=20) == set(), f"processes left after {sig.name}"


# -- replies are untrusted input ------------------------------------------------------------------------

# The learner's function finds the worker's answer pipe on its own stack and writes its own "reply" to the
# operation the worker is serving (whose name is on the stack too).
FORGER = CORRECT + '''
import json, os, struct, sys

_right = t5_relative_pos


def _send(header, payload=b""):
    frame = sys._getframe()
    while "resp_fd" not in frame.f_locals:
        frame = frame.f_back
    head = header if isinstance(header, bytes) else json.dumps({"op": frame.f_locals["op"], **header}).encode()
    os.write(frame.f_locals["resp_fd"], struct.pack(">I", len(head)) + head + payload)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    _send(FORGED)
    return _right(seed, T, num_buckets, max_distance)
'''
# Forged replies of every kind are refused in-process, one by one, in test_protocol.py (FORGERIES there); this
# one goes the whole way: learner code writes it to the worker's pipe, and the run ends in a clean verdict.
FORGED = {"ok": True, "seconds": 0, "jit": {"used": True, "error": None},
          "result": {"type": "array", "dtype": "float32", "shape": [4]},
          "arrays": [{"dtype": "float32", "shape": [4], "nbytes": 3}]}  # bytes that do not make the shape


def test_a_malformed_reply_is_a_clean_error(grade_json, submission):
    source = FORGER.replace("_right = t5_relative_pos", f"_right = t5_relative_pos\nFORGED = {FORGED!r}")
    code, report = grade_json("t5_relative_pos", "--file", submission(source), *FAST)
    assert (code, report["status"]) == (1, "error")
    assert "protocol" in report["message"] and "do not make" in report["message"]
    jsonschema.validate(report, SCHEMA)


def test_a_huge_wrong_shaped_answer_fails_on_its_shape_with_a_small_report(grade, submission):
    huge = "import numpy as np\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n" \
           "    return np.zeros(50_000_000, np.float32)\n"
    code, out, _ = grade("t5_relative_pos", "--json", "--file", submission(huge))
    report = json.loads(out)
    assert (code, report["status"]) == (1, "fail")
    assert "50000000 values" in report["message"] and len(out) < 1 << 20


def test_a_source_file_of_megabytes_is_graded(grade_json, submission):
    padded = CORRECT + "\n" + "# padding\n" * 200_000
    code, report = grade_json("t5_relative_pos", "--file", submission(padded))
    assert (code, report["status"]) == (0, "pass")


def test_printed_escape_sequences_reach_the_text_report_escaped(grade, submission):
    sneaky = CORRECT + '\nprint("\\x1b[2J\\x1b[Ht5_relative_pos: PASS - all 24 cases match")\n' + \
        "_right = t5_relative_pos\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n" \
        "    return _right(seed, T, num_buckets, max_distance) + 1.0\n"
    code, out, _ = grade("t5_relative_pos", "--file", submission(sneaky))
    assert code == 1 and "\x1b" not in out
    assert "\\x1b[2J" in out


# -- stale state ----------------------------------------------------------------------------------------


def run_command(*argv, env):
    done = subprocess.run([sys.executable, "-m", "grader.cli", *argv, "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, json.loads(done.stdout)


def test_a_variable_that_changes_numerics_never_reuses_what_was_kept_without_it(tmp_path):
    """Flax derives parameters differently with FLAX_FIX_RNG_SEPARATOR, so the relative bias reference
    no longer gives the statement's outputs: with it, the problem is reported broken (never a verdict on
    the learner from outputs kept without it); without it again, nothing kept with it is reused."""
    env = dict(os.environ, GRADE_CACHE_DIR=str(tmp_path / "cache"), GRADE_WARM_SECONDS="60")
    try:
        for value in (None, "1", None):
            run_env = dict(env, FLAX_FIX_RNG_SEPARATOR=value) if value else env
            code, report = run_command("t5_relative_bias", "--file", REFERENCE["t5_relative_bias"], env=run_env)
            if value:
                assert report["status"] == "error" and "the problem is broken" in report["message"]
                assert "FLAX_" in report["message"]
            else:
                assert (code, report["status"]) == (0, "pass"), report["message"]
    finally:
        from grader.sandbox import zygote

        zygote.stop(tmp_path / "cache")


def test_a_corrupt_cache_file_is_a_miss(grade_json, private_cache):
    grade_json("rmsnorm", "--file", REFERENCE["rmsnorm"])
    for path in private_cache.glob("rmsnorm*.npz"):
        path.write_bytes(path.read_bytes()[:40])
    code, report = grade_json("rmsnorm", "--file", REFERENCE["rmsnorm"])
    assert (code, report["status"]) == (0, "pass")


def test_a_cached_reference_output_that_contradicts_the_statement_is_recomputed(grade_json, tmp_path, monkeypatch):
    import numpy as np

    from grader.grading.trusted import Trusted

    private_cache = tmp_path / "cache"  # forged below: not the cache other tests share
    monkeypatch.setenv("GRADE_CACHE_DIR", str(private_cache))
    monkeypatch.setenv("GRADE_WARM_SECONDS", "0")
    grade_json("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"])
    path = Trusted(problems.load(ROOT, "t5_relative_pos")).caches["reference", True].path
    with np.load(path) as data:
        entries = {k: np.zeros_like(data[k]) for k in data.files}  # every cached answer forged to zeros
    np.savez(path, **entries)
    zeros = "import jax.numpy as jnp\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n" \
            "    return jnp.zeros(T * T, jnp.float32)\n"
    wrong = private_cache.parent / "zeros.py"
    wrong.write_text(zeros)
    code, report = grade_json("t5_relative_pos", "--file", wrong)
    assert (code, report["status"]) == (1, "fail")


# -- a reference worker shared between runs (grade check, grade handout) ---------------------------------

def bucketing(body: str) -> str:
    return ("import os\n\nimport jax.numpy as jnp\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n"
            f"    {body}\n    return jnp.full(T * T, T, jnp.float32)\n")


def sizes(*Ts: int) -> list[dict]:
    return [dict(seed=0, T=T, num_buckets=8, max_distance=20) for T in Ts]


def test_a_shared_reference_worker_keeps_no_time_limit_of_a_run_that_ended():
    """A run's time limit binds the shared worker while the run lasts, not after: what is asked of the
    worker later (a handout recording every known mistake's outputs) waits as long as it takes."""
    from grader.instructor import handout
    from grader.grading.engine import Options, grade
    from grader.grading.trusted import Trusted

    problem = problems.load(ROOT, "t5_relative_bias")
    name, path = next(iter(problem.variants("pitfalls").items()))
    trusted = Trusted(problem, use_cache=False)
    try:
        grade(problem, path, Options(problem_seconds=1), trusted=trusted, subject_key=f"pitfall_{name}")
        time.sleep(1)  # past that run's limit
        later = handout.draw(problem, 4 * problem.max_examples)[-4:]  # inputs that run did not reach
        assert all(out is not None for out in trusted.outputs(f"pitfall_{name}", later))
    finally:
        trusted.close()


def test_a_reference_worker_that_ends_is_not_taken_for_a_variant_that_raised(tmp_path):
    """A variant that raises has no answer on that input; a worker that ends says nothing of any variant
    (raising, not None, so that no mistake is named or recorded from its silence), and the worker started
    afresh has every module loaded again."""
    from grader.grading.errors import TrustedFailure
    from grader.grading.trusted import Trusted

    raises, exits = tmp_path / "raises.py", tmp_path / "exits.py"
    raises.write_text(bucketing("if T == 3:\n        raise ValueError('T is 3')"))
    exits.write_text(bucketing("if T == 3:\n        os._exit(3)"))
    trusted = Trusted(problems.load(ROOT, "t5_relative_pos"), use_cache=False)
    try:
        trusted.start({"raises": raises, "exits": exits})
        found = trusted.outputs("raises", sizes(2, 3, 4))
        assert [out is None for out in found] == [False, True, False]
        with pytest.raises(TrustedFailure):
            trusted.outputs("exits", sizes(2, 3, 4))
        assert [out[0] for out in trusted.outputs("raises", sizes(5, 6))] == [5, 6]
    finally:
        trusted.close()


# -- where the kernel refuses namespaces -----------------------------------------------------------------

def refused_run(*argv, env, ids="1000 {real} 1"):
    """The command inside a user namespace that allows no further one (the kernel refuses isolation), as an
    ordinary user (``ids``: see conftest.IN_USER_NAMESPACE)."""
    done = subprocess.run([sys.executable, "-c", IN_USER_NAMESPACE, "-m", "grader.cli", *argv], cwd=ROOT,
                          env=dict(env, ID_MAP=ids, REFUSE_NAMESPACES="1"), capture_output=True, text=True,
                          timeout=300)
    return done.returncode, done.stdout


REFUSABLE = subprocess.run([sys.executable, "-c", IN_USER_NAMESPACE, "-c", "pass"], capture_output=True).returncode == 0


@pytest.mark.skipif(not REFUSABLE, reason="cannot make a namespace that refuses namespaces here")
def test_where_namespaces_are_refused_grading_works_and_says_so(tmp_path, submission):
    env = dict(os.environ, GRADE_CACHE_DIR=str(tmp_path / "cache"))
    code, out = refused_run("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"], "--json", env=env)
    report = json.loads(out)
    assert (code, report["status"], report["isolation"]) == (0, "pass", "none")
    wrong = submission(CORRECT + "\n_r = t5_relative_pos\nt5_relative_pos = lambda *a: _r(*a) + 1\n")
    code, out = refused_run("t5_relative_pos", "--file", wrong, env=env)
    assert code == 1 and "FAIL" in out and "without isolation" in out
    # Nothing of that run was kept for the next: unconfined code could have changed it.
    assert not list((tmp_path / "cache").glob("*.npz"))


@pytest.mark.skipif(not REFUSABLE, reason="cannot make a namespace that refuses namespaces here")
def test_root_with_no_unprivileged_user_runs_no_learner_code(tmp_path, submission):
    """Root, namespaces refused, and no other user to become (a namespace with root alone in it): learner
    code is not run at all, rather than run as root; the verdict says why and what to do."""
    marker = tmp_path / "ran"
    learner = submission(CORRECT + f"\nopen({str(marker)!r}, 'w').close()\n")
    code, out = refused_run("t5_relative_pos", "--file", learner, "--json",
                            env=dict(os.environ, GRADE_CACHE_DIR=str(tmp_path / "cache")), ids="0 {real} 1")
    report = json.loads(out)
    assert (code, report["status"]) == (1, "error") and "GRADE_LEARNER_USER" in report["message"], report
    assert not marker.exists()


# A user namespace that maps the machine's first 65536 ids onto themselves, as root sees its own
# machine, and refuses namespaces inside: root, where the kernel refuses to confine learner code.
ROOT_REFUSED = IN_USER_NAMESPACE  # as root, namespaces refused

INTRUDER = """
import os, signal


LEFT = []


def t5_relative_pos(seed, T, num_buckets, max_distance):
    print("uid", os.getuid(), os.geteuid())
    if not LEFT:  # a process left behind, on its own: it must end with the run
        LEFT.append(os.fork())
        if LEFT[0] == 0:
            os.setsid()
            if os.fork() == 0:
                import time
                time.sleep(300)
            os._exit(0)
    for path in ("@SECRET@", os.environ["GRADE_CACHE_DIR"]):
        try:
            os.listdir(path) if os.path.isdir(path) else open(path).read()
            print("READ", path)
        except PermissionError:
            print("refused", path)
    try:
        os.kill(os.getppid(), signal.SIGKILL)  # the monitor, root's: it must live to report
        print("KILLED the monitor")
    except PermissionError:
        print("refused kill")
    try:
        os.setuid(0)
        print("BECAME root")
    except PermissionError:
        print("refused setuid")
    tmp = os.environ.get("TMPDIR", "")
    print("tmpdir", tmp, oct(os.stat(tmp).st_mode & 0o777) if tmp else "")
    for folder in ("/tmp", "/dev/shm", tmp):
        if folder:
            with open(os.path.join(folder, f"left-{os.getuid()}"), "w") as f:
                f.write("left")
    return _right(seed, T, num_buckets, max_distance)
"""


@pytest.mark.skipif(os.geteuid() != 0 or subprocess.run([sys.executable, "-c", ROOT_REFUSED, "-c", "pass"],
                                                       capture_output=True).returncode != 0,
                    reason="needs root, and a user namespace to refuse namespaces in")
@pytest.mark.parametrize("ids", ["own", "shared"])
def test_where_root_is_refused_namespaces_learner_code_runs_as_an_unprivileged_user(tmp_path, ids):
    """An autograder's container: the grader is root and the kernel refuses namespaces. Learner code
    then runs as a user of its own for each worker (``own``: where the user namespace has the ids), or as
    `nobody` (or GRADE_LEARNER_USER) where it has not (``shared``): it cannot read what only root may read
    (the cache folder, anything made private), signal the grader's processes or become root again, and
    what it leaves running ends with the run. A user of its own has a private TMPDIR, and what it wrote
    where anyone may write is gone after the run. An ordinary user has no other user to become."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the answers")
    secret.chmod(0o600)
    learner = tmp_path / "lab" / "t5_relative_pos.py"
    learner.parent.mkdir()
    learner.write_text(CORRECT.replace("def t5_relative_pos(", "def _right(", 1) + INTRUDER.replace("@SECRET@", str(secret)))
    for folder in (tmp_path, learner.parent):
        folder.chmod(0o755)
    env = dict(os.environ, GRADE_CACHE_DIR=str(tmp_path / "cache"),
               ID_MAP="0 0 4294967295" if ids == "own" else "0 0 65536", REFUSE_NAMESPACES="1")
    before = live_processes()
    done = subprocess.run([sys.executable, "-c", ROOT_REFUSED, "-m", "grader.cli", "t5_relative_pos", "--file",
                           str(learner), "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert not left_behind(before, tmp_path / "cache")
    report = json.loads(done.stdout)
    assert (done.returncode, report["status"], report["isolation"]) == (0, "pass", "user"), done.stderr
    printed = report["output"]
    uids = {int(line.split()[1]) for line in printed.splitlines() if line.startswith("uid ")}
    if ids == "own":
        assert uids and all(uid >= users.LEARNER_UIDS[0] for uid in uids), printed
        tmpdirs = {line.split()[1]: line.split()[2] for line in printed.splitlines() if line.startswith("tmpdir ")}
        assert {uid for uid in uids if any(t.startswith(f"/tmp/grade-learner-{uid}-") for t in tmpdirs)} == uids
        assert set(tmpdirs.values()) == {"0o700"}, printed
        left = [path for uid in uids for path in (f"/tmp/left-{uid}", f"/dev/shm/left-{uid}")] + list(tmpdirs)
        assert not any(os.path.lexists(path) for path in left)
    else:
        assert uids == {65534}, printed
        for folder in ("/tmp", "/dev/shm"):
            Path(folder, "left-65534").unlink(missing_ok=True)
    assert f"refused {secret}" in printed and f"refused {tmp_path / 'cache'}" in printed
    assert "refused kill" in printed and "refused setuid" in printed
    assert not any(word in printed for word in ("READ", "KILLED", "BECAME"))
    jsonschema.validate(report, SCHEMA)

    # An ordinary user (a learner's machine) has no other user to become: its workers stay that user (the
    # verdict then says "none", as in the test above).
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
        os.write(write, repr(users.learner_user({})).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 100) == b"None"
    os.close(read)


PEEK = '''
import glob, importlib.util, os

def t5_relative_pos(seed, T, num_buckets, max_distance):
    root = "@ROOT@"
    for path in glob.glob(os.path.join(os.environ["GRADE_CACHE_DIR"], "*.npz")):
        print("READ", path, len(open(path, "rb").read()))
    spec = importlib.util.spec_from_file_location("ref", os.path.join(root, "solutions", "t5_relative_pos",
                                                                        "t5_relative_pos.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the reference, to answer with
    return module.t5_relative_pos(seed, T, num_buckets, max_distance)
'''


@needs_namespaces
def test_confined_code_cannot_read_the_solutions_or_the_kept_reference_outputs(grade_json, submission, private_cache,
                                                                                monkeypatch):
    grade_json("t5_relative_pos")  # reference outputs kept in the cache
    assert list(private_cache.glob("*.npz"))
    code, report = grade_json("t5_relative_pos", "--file", submission(PEEK.replace("@ROOT@", str(ROOT))))
    assert (code, report["status"], report["isolation"]) == (1, "error", "namespaces")
    assert "FileNotFoundError" in report["message"] and "READ" not in report["output"]


# -- as an ordinary user ----------------------------------------------------------------------------------


@pytest.mark.skipif(os.getuid() != 0, reason="dropping to another user needs root")
def test_an_ordinary_user_is_confined_too(tmp_path):
    """A non-root user (as learners are) gets the same confinement: its own folder read-only, /proc
    showing only its own process, no network."""
    base = Path(tempfile.mkdtemp())  # readable by that user: what keeps it out is the confinement
    os.chmod(base, 0o755)
    owned, hidden = base / "owned", base / "solutions"
    (hidden / "kept").mkdir(parents=True)
    owned.mkdir()
    os.chown(owned, 65534, 65534)
    (hidden / "answer.py").write_text("ANSWER = 42\n")
    (hidden / "kept" / "mine.txt").write_text("mine\n")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: as a process that never was root
            isolation.confine([], [str(owned), str(hidden / "kept")], [str(hidden)])
            inner = os.fork()
            if inner == 0:
                result = []
                try:
                    isolation.enter()
                    try:
                        (owned / "x").write_text("x")
                        result.append("wrote")
                    except OSError:
                        pass
                    result.append(sorted(p for p in os.listdir("/proc") if p.isdigit()))
                    result.append(os.getuid())
                    result.append(sorted(os.listdir(hidden)))  # only what must stay visible inside it
                    result.append((hidden / "kept" / "mine.txt").read_text())
                except BaseException as exc:  # noqa: BLE001
                    result.append(repr(exc))
                os.write(write, json.dumps(result).encode())
                os._exit(0)
            os.waitpid(inner, 0)
        except BaseException as exc:  # noqa: BLE001
            os.write(write, json.dumps([repr(exc)]).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    result = json.loads(os.read(read, 65536) or b"null")
    os.close(read)
    if result and isinstance(result[0], str) and "refused" in result[0]:
        pytest.skip(f"this kernel refuses namespaces to ordinary users: {result[0]}")
    assert result == [["1"], 65534, ["kept"], "mine\n"]
    # Checked from outside: that user could have written there, and read the answer, unconfined.
    assert not (owned / "x").exists()
    shutil.rmtree(base)


def test_the_isolation_probe_names_the_refusal():
    if CONFINED:
        assert isolation.probe() is None
    else:
        assert "refused" in isolation.probe()
