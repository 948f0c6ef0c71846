"""A class graded where the kernel refuses namespaces (an autograder's container, the grader root), and a
class graded from inside its own folder: what confinement would give is still given.

Where namespaces are refused and the grader is root, learner code runs unconfined as an unprivileged user:
a uid of its own per worker where the user namespace maps those ids, else one user every worker shares
(``nobody``). Then nothing hides the checkout's files, the private copies of classmates' submissions or
the temporary folders a worker is given: permissions must. Where the workers share one user, one
submission's processes could reach another's: the class is graded one submission at a time, and what that
user left is gone after each. Each test runs the CLI as root in a user namespace that refuses namespaces
(see conftest.IN_USER_NAMESPACE)."""

from __future__ import annotations

import csv
import json
import os
import pwd
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from conftest import IN_USER_NAMESPACE, ROOT
from grader.sandbox import users

REFERENCE = ROOT / "solutions" / "rel_shift" / "rel_shift.py"
CORRECT = REFERENCE.read_text()
WRONG = CORRECT.replace("[1:]", "[:-1]", 1)
HOSTILE = "# HOSTILE-CLASSMATE"  # in every hostile submission: the copier never answers with one of those


def namespace_works(id_map: str) -> bool:
    """Whether root can run Python in a user namespace with ``id_map`` that refuses namespaces inside."""
    done = subprocess.run([sys.executable, "-c", IN_USER_NAMESPACE, "-c", "import os; assert os.getuid() == 0"],
                          capture_output=True, env=dict(os.environ, ID_MAP=id_map, REFUSE_NAMESPACES="1"))
    return done.returncode == 0


def run_batch(cwd: Path, id_map: str, klass: Path, out: Path, cache: Path, *options: str):
    """``grade batch rel_shift KLASS --out OUT --quiet OPTIONS`` run from ``cwd`` as root, namespaces refused,
    with the ids ``id_map`` maps (the private copies in /tmp/grade-batch-*)."""
    env = dict(os.environ, ID_MAP=id_map, REFUSE_NAMESPACES="1", GRADE_CACHE_DIR=str(cache), TMPDIR="/tmp")
    return subprocess.run([sys.executable, "-c", IN_USER_NAMESPACE, "-m", "grader.cli", "batch", "rel_shift",
                           str(klass), "--out", str(out), "--quiet", *options], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def gradebook(out: Path) -> tuple[dict, dict]:
    """The gradebook's rows and the verdicts, by student."""
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    verdicts = {path.stem: json.loads(path.read_text()) for path in (out / "verdicts").glob("*.json")}
    return rows, verdicts


# -- root, namespaces refused, a uid of its own for each worker ---------------------------------------------

OWN_IDS = "0 0 4294967295"

# Appended to the wrong answer: the right one, where the reference can be imported from the solutions.
IMPORTS_THE_REFERENCE = '''
import importlib.util as _util

_path = {path!r}
try:
    _spec = _util.spec_from_file_location("_reference", _path)
    _module = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    rel_shift = _module.rel_shift
    print("IMPORTED", _path)
except Exception as _exc:  # noqa: BLE001
    print("REFUSED", _path, type(_exc).__name__, _exc)
'''

# Appended to the wrong answer: the right one, where a classmate's private copy (this class's: it holds
# the class's token) can be read.
COPIES_A_CLASSMATE = '''
import os as _os

_token = {token!r}


def _texts():
    import glob

    for batch in sorted(glob.glob("/tmp/grade-batch-*")):
        try:
            numbers = _os.listdir(batch)
        except OSError as exc:
            print("REFUSED", batch, exc.strerror)
            continue
        for number in numbers:
            folder = _os.path.join(batch, number)
            try:
                names = _os.listdir(folder)
            except OSError as exc:
                print("REFUSED", folder, exc.strerror)
                continue
            for name in names:
                try:
                    with open(_os.path.join(folder, name)) as f:
                        yield _os.path.join(folder, name), f.read()
                except OSError as exc:
                    print("REFUSED", _os.path.join(folder, name), exc.strerror)


for _path, _text in _texts():
    if _token in _text and "HOSTILE-CLASSMATE" not in _text:
        _theirs = {{}}
        exec(compile(_text, _path, "exec"), _theirs)
        rel_shift = _theirs["rel_shift"]
        print("COPIED", _path)
        break
'''

# Appended to the right answer: at import, makes the temporary folder of every worker started next (a
# worker's uid is LEARNER_UIDS[0] plus its pid), again and again while the classmates' workers start.
MAKES_WORKER_FOLDERS = '''
import os as _os
import time as _time

_first, _count = {first}, {count}


def _make(pids):
    made = 0
    for pid in pids:
        try:
            _os.mkdir("/tmp/grade-learner-%d" % (_first + pid % _count))
            made += 1
        except OSError:
            pass
    return made


_made = _make(range(_os.getpid() + 1, _os.getpid() + 3000))
_until = _time.monotonic() + {seconds}
while _time.monotonic() < _until:  # the pids the machine hands out meanwhile, too
    _top = max(int(p) for p in _os.listdir("/proc") if p.isdigit())
    _made += _make(range(_top + 1, _top + 500))
    _time.sleep(0.2)
print("MADE", _made)
'''


@pytest.fixture
def world_readable_checkout():
    """A copy of the checkout (grader, problems, solutions) that every user may read, solutions included,
    as a CI clone is: the grader alone must withhold what gives the answers away. In /tmp, not under
    pytest's own (private) temporary folders: learner code, another user, reaches it."""
    base = Path(tempfile.mkdtemp(prefix="class-refused-", dir="/tmp"))
    try:
        base.chmod(0o755)
        checkout = base / "checkout"
        for part in ("grader", "problems", "solutions"):
            shutil.copytree(ROOT / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copy(ROOT / "pyproject.toml", checkout / "pyproject.toml")
        for folder, dirs, files in os.walk(base):
            os.chmod(folder, 0o755)
            for name in files:
                path = os.path.join(folder, name)
                os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) | 0o444)
        yield checkout
    finally:
        shutil.rmtree(base, ignore_errors=True)


OWN_IDS_USABLE = os.geteuid() == 0 and namespace_works(OWN_IDS)


@pytest.mark.skipif(not OWN_IDS_USABLE, reason="needs root, and a user namespace to refuse namespaces in")
def test_without_namespaces_a_submission_reads_neither_the_solutions_nor_a_classmates_copy(world_readable_checkout):
    """Root, namespaces refused, a uid of its own per worker. A submission that imports the reference from
    the checkout's solutions answers wrong: the solutions were withheld from other users before it ran, and
    stay so. One that reads the private copies of its classmates' submissions is refused, and answers
    wrong too. The correct classmate passes."""
    checkout = world_readable_checkout
    solutions = checkout / "solutions"
    assert solutions.stat().st_mode & 0o005 == 0o005  # anyone could read the solutions before the run
    token = uuid.uuid4().hex
    klass = checkout.parent / "class"
    klass.mkdir()
    (klass / "alice.py").write_text(CORRECT + f"\n# class {token}\n")
    (klass / "imports_the_reference.py").write_text(WRONG + HOSTILE + IMPORTS_THE_REFERENCE.format(
        path=str(solutions / "rel_shift" / "rel_shift.py")))
    (klass / "copies_a_classmate.py").write_text(WRONG + HOSTILE + COPIES_A_CLASSMATE.format(token=token))
    out = checkout.parent / "grades"
    done = run_batch(checkout, OWN_IDS, klass, out, checkout.parent / "cache", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    rows, verdicts = gradebook(out)
    assert verdicts["alice"]["isolation"] == "user", verdicts["alice"]  # unconfined, as a user of its own
    assert rows["alice"]["status"] == "pass", rows["alice"]

    importer = verdicts["imports_the_reference"]
    assert importer["status"] == "fail", importer  # its own, wrong, answer: the reference could not be read
    assert "REFUSED" in importer["output"] and "IMPORTED" not in importer["output"], importer["output"]
    assert solutions.stat().st_mode & 0o007 == 0  # withheld from other users, and left so

    copier = verdicts["copies_a_classmate"]
    assert copier["status"] == "fail", copier  # its own, wrong, answer: no classmate's copy could be read
    assert "REFUSED /tmp/grade-batch-" in copier["output"] and "COPIED" not in copier["output"], copier["output"]


@pytest.mark.skipif(not OWN_IDS_USABLE, reason="needs root, and a user namespace to refuse namespaces in")
def test_without_namespaces_worker_folders_made_in_advance_stop_no_classmates_worker(tmp_path):
    """Root, namespaces refused, a uid of its own per worker. A submission that makes, at import, the
    temporary folder of every worker started after it (`/tmp/grade-learner-<uid>`, a uid being
    LEARNER_UIDS[0] plus the worker's pid) stops none of them: its classmates, one graded beside it and
    one after it, pass."""
    klass = tmp_path / "class"
    klass.mkdir()
    # Graded in this order, two at a time: bob's worker starts while the folders are being made.
    (klass / "a_makes_worker_folders.py").write_text(CORRECT + HOSTILE + MAKES_WORKER_FOLDERS.format(
        first=users.LEARNER_UIDS[0], count=users.LEARNER_UIDS[1], seconds=6))
    (klass / "b_alice.py").write_text(CORRECT)
    (klass / "c_bob.py").write_text(CORRECT)
    done = run_batch(ROOT, OWN_IDS, klass, tmp_path / "grades", tmp_path / "cache", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    rows, verdicts = gradebook(tmp_path / "grades")
    assert "MADE" in verdicts["a_makes_worker_folders"]["output"], verdicts["a_makes_worker_folders"]
    assert verdicts["b_alice"]["isolation"] == "user", verdicts["b_alice"]  # unconfined, as a user of its own
    assert (rows["b_alice"]["status"], rows["c_bob"]["status"]) == ("pass", "pass"), (rows["b_alice"], rows["c_bob"])


# -- root, namespaces refused, one user (nobody) that every worker shares ------------------------------------

try:
    NOBODY = pwd.getpwnam("nobody")
except KeyError:
    NOBODY = None


def shared_ids(outside: int) -> str:
    """Root and the first 65536 ids, as `ID_MAP="0 0 65536"` maps them (no ids for a uid of each worker's
    own: the workers share `nobody`), except that `nobody` is ``outside`` on the machine: what the test's
    learner code does as `nobody` (kill every process it may, use up the user's process limit) reaches the
    processes of this test alone, not those of another test or of the machine that run as `nobody`."""
    uid = NOBODY.pw_uid
    return f"0 0 {uid}\n{uid} {outside} 1\n{uid + 1} {uid + 1} {65535 - uid}"


SHARED_USABLE = (os.geteuid() == 0 and NOBODY is not None and NOBODY.pw_uid == NOBODY.pw_gid
                 and 0 < NOBODY.pw_uid < 65535 and namespace_works(shared_ids(3_000_000_000)))

# Appended to the right answer: at import, leave a file where any user may write; then one of ATTACKS, on
# whoever else runs as the same user.
LEAVES = '''
import os as _os

for _folder in {folders!r}:
    with open(_os.path.join(_folder, {name!r}), "w") as _f:
        _f.write("left")
'''

ATTACKS = {
    # Kill every process this user may signal, again and again while a classmate would be running.
    "kill": '''
import signal as _signal
import time as _time

_sent = 0
_until = _time.monotonic() + 4
while _time.monotonic() < _until:
    try:
        _os.kill(-1, _signal.SIGKILL)
        _sent += 1
    except OSError:
        pass
    _time.sleep(0.02)
print("KILLS SENT", _sent)
''',
    # Take every task the user's process limit allows, and hold them while a classmate would be running.
    "threads": '''
import threading as _threading
import time as _time

_hold = _threading.Event()
_threading.stack_size(64 << 10)  # small: the process limit, not the memory limit, is what runs out
_started = 0
for _ in range(2000):
    try:
        _threading.Thread(target=_hold.wait, args=(60,), daemon=True).start()
        _started += 1
    except RuntimeError:
        break
print("THREADS STARTED", _started)
_time.sleep(4)
''',
}


@pytest.mark.skipif(not SHARED_USABLE, reason="needs root, a `nobody` user, and a user namespace to refuse "
                                              "namespaces in")
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_where_workers_share_one_user_a_submission_reaches_no_classmate_and_leaves_no_file(tmp_path, attack):
    """Root, namespaces refused, workers that share `nobody`. A submission that kills every process it may
    (``kill``), or starts 2000 threads (``threads``), does not reach the classmate graded in the same batch
    (`--jobs 2` notwithstanding, the class is graded one at a time), and the files it left in /tmp,
    /var/tmp and /dev/shm are gone after the batch."""
    name = f"left-{uuid.uuid4().hex}"
    folders = [folder for folder in users.TEMPORARY if os.path.isdir(folder)]  # /var/tmp may not exist
    left = [os.path.join(folder, name) for folder in folders]
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "a_alice.py").write_text(CORRECT)
    (klass / f"b_{attack}.py").write_text(CORRECT + LEAVES.format(folders=folders, name=name) + ATTACKS[attack])
    outside = 3_000_000_000 + random.randrange(1 << 30)
    try:
        done = run_batch(ROOT, shared_ids(outside), klass, tmp_path / "grades", tmp_path / "cache", "--jobs", "2")
        assert done.returncode == 0, done.stderr
        rows, verdicts = gradebook(tmp_path / "grades")
        attacker = verdicts[f"b_{attack}"]
        assert verdicts["a_alice"]["isolation"] == "user", verdicts["a_alice"]
        assert ("KILLS SENT" if attack == "kill" else "THREADS STARTED") in attacker["output"], attacker
        assert rows["a_alice"]["status"] == "pass", rows["a_alice"]
        assert [path for path in left if os.path.lexists(path)] == []
    finally:
        for path in left:
            try:
                os.unlink(path)
            except OSError:
                pass


# -- `grade batch` run from inside the class folder -----------------------------------------------------------

# Put before the right answer, in a submission named after a module the grader imports: when imported as that
# module (by the grader, not graded), it leaves a mark first.
SHADOWS = '''
if __name__ == {module!r}:
    with open({marker!r}, "w") as _f:
        _f.write("imported by the grader")
'''


def test_a_batch_run_from_the_class_folder_imports_no_submission_as_a_module(tmp_path, private_cache):
    """`grade batch` typed in the class's folder: the grading processes it starts do not have that folder on
    their import path, so a submission named `json.py` or `numpy.py` is graded, never imported (as root)
    by a classmate's grading in place of the module it is named after; the classmate passes."""
    klass, markers = tmp_path / "class", tmp_path / "markers"
    klass.mkdir()
    markers.mkdir()
    (klass / "alice.py").write_text(CORRECT)
    for module in ("json", "numpy"):
        (klass / f"{module}.py").write_text(SHADOWS.format(module=module, marker=str(markers / module)) + CORRECT)
    # The installed entry point, not `python -m grader.cli`: `python -m` puts the current folder first on the
    # path of the top-level process itself, which imports json before the grader can do anything about it;
    # the entry point does not (its script's folder, .venv/bin, is first). PYTHONPATH: the checkout's
    # grader, as an instructor without an install would have it.
    done = subprocess.run([str(Path(sys.executable).parent / "grade"), "batch", "rel_shift", str(klass), "--out",
                           str(tmp_path / "grades"), "--jobs", "2", "--quiet"], cwd=klass,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in markers.iterdir()) == []
    rows, _ = gradebook(tmp_path / "grades")
    assert rows["alice"]["status"] == "pass", rows["alice"]
