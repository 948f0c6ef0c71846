"""Learner code has no privilege on any path: never the host's root, no setting of the kernel's
writable, no user namespace of its own, no process limit lifted; its import path and its view hold the
grader, its dependencies and the graded problem, and its environment only what the grader lets through.

Each path an instructor takes is tried: root with namespaces (this machine), root where the kernel refuses
them (a user namespace that refuses namespaces, with every id), an ordinary user; and the checkout on
PYTHONPATH. The probe is a correct submission that, at import, tries everything and prints what worked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IN_USER_NAMESPACE, REFERENCE, ROOT
from grader.problem import problems
from grader.problem.checkout import SECRET_VARIABLE, graded_file
from grader.sandbox import config, isolation, users

CORRECT = REFERENCE["t5_relative_pos"].read_text()
CONFINED = isolation.probe() is None

# Printed lines: "OPENED <path>" / "UNSHARED" / "READ <path>" are what must never happen.
PROBE = CORRECT + '''
import ctypes as _ctypes
import os as _os
import resource as _resource
import sys as _sys

print("uid", _os.getuid(), _os.geteuid(), _os.getgid(), _os.getgroups())
for _path in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches"):
    try:
        open(_path, "w").close()
        print("OPENED", _path)
    except OSError as _exc:
        print("refused", _path, _exc.strerror)
for _path in ("/etc/shadow", "@ROOT@/.git/HEAD"):
    try:
        open(_path).read()
        print("READ", _path)
    except OSError as _exc:
        print("refused", _path, _exc.strerror)
_child = _os.fork()  # unshare(CLONE_NEWUSER) needs a single thread: JAX has several
if _child == 0:
    _libc = _ctypes.CDLL(None, use_errno=True)
    print("UNSHARED" if _libc.unshare(0x10000000) == 0 else "no user namespace", flush=True)
    _os._exit(0)
_os.waitpid(_child, 0)
_status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
print("caps", _status["CapEff"].strip(), _status["CapPrm"].strip(), _status["CapBnd"].strip())
print("nnp", _status["NoNewPrivs"].strip())
print("nproc", _resource.getrlimit(_resource.RLIMIT_NPROC)[0])
print("path", _sys.path)
print("env", sorted(_os.environ))
'''


def facts(printed: str) -> dict:
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in printed.splitlines() if " " in line}


def assert_unprivileged(printed: str) -> None:
    """What every path holds: not root, nothing of the kernel's writable, no nested namespace, no
    capability, no new privilege, a process limit; nothing of the checkout's history readable."""
    seen = facts(printed)
    assert not any(line.startswith(("OPENED", "READ", "UNSHARED")) for line in printed.splitlines()), printed
    assert "no user namespace" in printed
    uid, euid = map(int, seen["uid"].split()[:2])
    assert uid != 0 and euid != 0, printed
    assert seen["caps"].split() == ["0000000000000000"] * 2 + [seen["caps"].split()[2]]
    assert seen["nnp"] == "1" and int(seen["nproc"]) == isolation.PROCESS_LIMIT


def probe_file(tmp_path: Path) -> Path:
    """The probe in a folder any user may read (the workers of a root grader are another user)."""
    folder = tmp_path / "lab"
    folder.mkdir()
    for f in (tmp_path, folder):
        f.chmod(0o755)
    path = folder / "t5_relative_pos.py"
    path.write_text(PROBE.replace("@ROOT@", str(ROOT)))
    return path


def grade_probe(tmp_path: Path, *prefix: str, env: dict | None = None) -> dict:
    env = dict(env or os.environ, GRADE_CACHE_DIR=str(tmp_path / "cache"), GRADE_WARM_SECONDS="0",
               INSTRUCTOR_TOKEN="secret-token")
    done = subprocess.run([sys.executable, *prefix, "-m", "grader.cli", "t5_relative_pos", "--file",
                           str(probe_file(tmp_path)), "--json"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    report = json.loads(done.stdout)
    assert report["status"] == "pass", (report["message"], done.stderr)
    return report


@pytest.mark.grading
@pytest.mark.skipif(os.geteuid() != 0 or not CONFINED, reason="needs root and namespaces")
def test_a_root_graders_confined_code_is_an_unprivileged_user_of_its_own(tmp_path):
    report = grade_probe(tmp_path)
    assert report["isolation"] == "namespaces"
    assert_unprivileged(report["output"])
    assert int(facts(report["output"])["uid"].split()[0]) == users.LEARNER_UIDS[0]


ROOT_REFUSED = subprocess.run([sys.executable, "-c", IN_USER_NAMESPACE, "-c", "pass"], capture_output=True,
                              env=dict(os.environ, ID_MAP="0 0 4294967295")).returncode == 0


@pytest.mark.grading
@pytest.mark.skipif(os.geteuid() != 0 or not ROOT_REFUSED, reason="needs root, and a namespace that refuses namespaces")
def test_where_root_is_refused_namespaces_learner_code_holds_no_privilege_either(tmp_path):
    private = [p for p in (ROOT / ".git", ROOT / "solutions") if p.exists()]
    modes = {p: p.stat().st_mode for p in private}
    try:
        report = grade_probe(tmp_path, "-c", IN_USER_NAMESPACE,
                             env=dict(os.environ, ID_MAP="0 0 4294967295", REFUSE_NAMESPACES="1"))
        # What the namespaces would hide is withheld from every other user.
        assert not any(p.stat().st_mode & 0o007 for p in private), private
    finally:
        for p, mode in modes.items():
            p.chmod(mode & 0o7777)
    assert report["isolation"] == "user"
    printed = report["output"]
    assert_unprivileged(printed)
    assert int(facts(printed)["uid"].split()[0]) > users.LEARNER_UIDS[0]  # a user of this worker's own


@pytest.mark.grading
@pytest.mark.skipif(not CONFINED, reason="this kernel refuses namespaces")
def test_with_the_checkout_on_pythonpath_the_worker_sees_no_checkout_and_no_instructors_variable(tmp_path):
    """The checkout on PYTHONPATH (an instructor without an install): the worker's import path holds the
    interpreter's folders only, its view no history of the checkout, its environment no variable of the
    instructor's own."""
    report = grade_probe(tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    printed = report["output"]
    assert f"refused {ROOT}/.git/HEAD" in printed
    path = eval(facts(printed)["path"])  # noqa: S307  (a list literal the probe printed)
    assert str(ROOT) not in path and "" not in path and all(p.startswith("/") for p in path), path
    env = eval(facts(printed)["env"])  # noqa: S307
    assert "INSTRUCTOR_TOKEN" not in env and "PYTHONPATH" not in env and SECRET_VARIABLE not in env


LATER_KATA = '''
import importlib.util, os

_spec = importlib.util.spec_from_file_location("later", os.path.join({root!r}, "problems", "mini_t5_forward",
                                                                      "mini_t5_forward.py"))
_later = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_later)
RMSNorm = _later.RMSNorm  # the layer a later kata gives


def rmsnorm(seed, x, eps):
    import jax
    import jax.numpy as jnp

    x = jnp.asarray(x, jnp.float32)
    model = RMSNorm(d_model=x.shape[-1], eps=eps)
    return model.apply(model.init(jax.random.PRNGKey(seed), x), x).reshape(-1)
'''


@pytest.mark.grading
@pytest.mark.skipif(not CONFINED, reason="this kernel refuses namespaces")
def test_a_later_katas_stub_is_not_in_view(grade_json, submission):
    """mini T5's stub gives an RMSNorm: a submission to rmsnorm that imports it finds no such file."""
    code, report = grade_json("rmsnorm", "--file", submission(LATER_KATA.format(root=str(ROOT)), "rmsnorm.py"))
    assert (code, report["status"]) == (1, "error") and "FileNotFoundError" in report["message"], report["message"]


def test_the_workers_environment_is_an_allow_list(monkeypatch):
    monkeypatch.setenv("INSTRUCTOR_TOKEN", "secret-token")
    monkeypatch.setenv(SECRET_VARIABLE, "1")
    monkeypatch.setenv("GRADE_HIDE", "/class")
    monkeypatch.setenv("JAX_ENABLE_X64", "0")
    env = config.worker_env()
    assert not {"INSTRUCTOR_TOKEN", SECRET_VARIABLE, "GRADE_HIDE"} & set(env)
    assert env["JAX_ENABLE_X64"] == "0" and env["PATH"] == os.environ["PATH"]


def test_the_workers_import_path_has_no_current_folder_pythonpath_or_checkout(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{tmp_path / 'lib'}")
    monkeypatch.setattr(sys, "path", ["", str(ROOT), str(tmp_path / "lib"), str(ROOT / "tests"), *sys.path])
    path = isolation.import_path()
    assert not {"", str(tmp_path), str(ROOT), str(tmp_path / "lib"), str(ROOT / "tests")} & set(path)
    assert any(p.endswith("site-packages") for p in path)


def test_a_symbolic_link_given_to_grade_file_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root's own\n")
    link = tmp_path / "t5_relative_pos.py"
    link.symlink_to(secret)
    with pytest.raises(problems.UsageError, match="symbolic link"):
        graded_file(link)


FILLS_SHM = CORRECT + '''
import os as _os
import time as _time

_right = t5_relative_pos


def t5_relative_pos(seed, T, num_buckets, max_distance):
    for i in range(6):  # 300 MiB in files of 50, each under the limit on one file
        with open(f"/dev/shm/fill-{_os.getuid()}-{i}", "wb") as f:
            f.write(b"x" * (50 << 20))
    _time.sleep(3)
    return _right(seed, T, num_buckets, max_distance)
'''


@pytest.mark.grading
@pytest.mark.skipif(os.geteuid() != 0 or not ROOT_REFUSED, reason="needs root, and a namespace that refuses namespaces")
def test_where_root_is_refused_namespaces_temporary_files_are_bounded_in_total(tmp_path):
    """No private /tmp or /dev/shm bounds what unconfined code keeps there: the worker that keeps more than a
    confined one's /tmp may hold is ended, the verdict says why, and its files are gone."""
    learner = probe_file(tmp_path)
    learner.write_text(FILLS_SHM)
    env = dict(os.environ, GRADE_CACHE_DIR=str(tmp_path / "cache"), GRADE_WARM_SECONDS="0",
               ID_MAP="0 0 4294967295", REFUSE_NAMESPACES="1")
    done = subprocess.run([sys.executable, "-c", IN_USER_NAMESPACE, "-m", "grader.cli", "t5_relative_pos", "--file",
                           str(learner), "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert (report["status"], report["isolation"]) == ("error", "user"), report["message"]
    assert f"more than {users.TEMPORARY_LIMIT >> 20} MiB" in report["message"]
    assert not [p for p in Path("/dev/shm").glob("fill-*") if p.lstat().st_uid >= users.LEARNER_UIDS[0]]
