"""A class's verdicts nobody can game: each submission is graded from a copy of its own, sees no classmate,
no gradebook and no other file's compiled programs; no link is followed with the grader's rights; odd
names and loops give rows, not tracebacks; files the grader writes never go through a link."""

from __future__ import annotations

import compileall
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IN_USER_NAMESPACE, ROOT
from grader.core import submission
from grader.instructor import gradescope
from grader.core.files import write_text

REFERENCE = ROOT / "solutions" / "rel_shift" / "rel_shift.py"

# Appended to the reference: at import, try to read what a classmate, the gradebook and other compile
# caches hold, and print what could be read (the verdict carries what learner code prints).
SNOOP = '''

import glob as _glob
import os as _os

for _pattern in {patterns!r}:
    for _path in _glob.glob(_pattern):
        if _os.path.abspath(_path) != _os.path.abspath(__file__):
            try:
                with open(_path, "rb") as _f:
                    print("READ", _path, len(_f.read()))
            except OSError as _exc:
                print("REFUSED", _path, _exc.strerror)
print("SNOOPED")


def _cache_neighbours():
    import jax

    mine = jax.config.jax_compilation_cache_dir
    if mine:
        print("CACHES", sorted(_os.listdir(_os.path.dirname(mine))))


_right = rel_shift


def rel_shift(seed, x):
    _cache_neighbours()
    return _right(seed, x)
'''


def batch(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", "batch", *map(str, argv)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_a_submission_sees_no_classmate_no_gradebook_no_other_cache_and_links_are_rows(tmp_path, private_cache):
    klass, out = tmp_path / "class", tmp_path / "grades"
    klass.mkdir()
    (klass / "alice.py").write_bytes(REFERENCE.read_bytes())
    patterns = [str(klass / "*.py"), str(klass / "*" / "rel_shift.py"), str(out / "*"), str(out / "verdicts" / "*"),
                str(ROOT / "solutions" / "rel_shift" / "*.py")]
    (klass / "snoop.py").write_text(REFERENCE.read_text() + SNOOP.format(patterns=patterns))
    (klass / "linked.py").symlink_to(REFERENCE)  # a link to the solution
    (klass / "carol").symlink_to(REFERENCE.parent, target_is_directory=True)  # a linked folder
    (klass / "loop.py").symlink_to(klass / "loop.py")  # a loop
    (klass / os.fsdecode(b"d\xffve.py")).write_bytes(REFERENCE.read_bytes())  # a name that is not UTF-8
    (klass / "large.py").write_text("#" * (submission.MAX_BYTES + 1))
    done = batch("rel_shift", klass, "--out", out, "--jobs", 2, "--quiet")
    assert done.returncode == 0, done.stderr
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert rows["alice"]["status"] == "pass"
    assert rows["d\\xffve"]["status"] == "pass"
    for student in ("linked", "carol", "loop"):
        assert rows[student]["status"] == "error" and "symbolic link" in rows[student]["message"], student
    assert rows["large"]["status"] == "error" and "more than the" in rows["large"]["message"]
    snooped = json.loads((out / "verdicts" / "snoop.json").read_text())
    assert snooped["status"] == "pass"
    printed = snooped["output"]
    assert "SNOOPED" in printed and "READ" not in printed  # nothing of the class, the gradebook or the solution
    assert "CACHES" not in printed  # graded once, from a copy: no compile cache at all, its own or another's


def test_gradescope_grades_no_link_to_the_solution(tmp_path):
    upload = tmp_path / "autograder" / "submission"
    upload.mkdir(parents=True)
    (upload / "rel_shift.py").symlink_to(REFERENCE)
    verdict = gradescope.grade_one("rel_shift", Path(sys.executable).parent / "grade", ROOT, upload, dict(os.environ))
    assert verdict.status == "error" and "symbolic link" in verdict.message


def test_a_submission_is_read_only_as_one_regular_file_under_its_folder(tmp_path):
    folder = tmp_path / "class"
    (folder / "bob").mkdir(parents=True)
    (folder / "bob" / "rel_shift.py").write_text("x = 1\n")
    assert submission.read(folder / "bob" / "rel_shift.py", folder) == b"x = 1\n"
    os.link(folder / "bob" / "rel_shift.py", folder / "hard.py")
    with pytest.raises(submission.Refused, match="hard link"):
        submission.read(folder / "hard.py", folder)
    (folder / "eve").symlink_to(folder / "bob", target_is_directory=True)
    with pytest.raises(submission.Refused, match="symbolic link"):
        submission.read(folder / "eve" / "rel_shift.py", folder)


def test_a_file_the_grader_writes_replaces_a_link_and_never_writes_through_it(tmp_path):
    target = tmp_path / "not-yours"
    target.write_text("keep")
    (tmp_path / "results.json").symlink_to(target)
    write_text(tmp_path / "results.json", "{}")
    assert target.read_text() == "keep"
    assert not (tmp_path / "results.json").is_symlink() and (tmp_path / "results.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-yours", "results.json"]  # no temporary left


def test_grading_a_file_in_a_loop_of_links_is_one_sentence(grade, tmp_path):
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    code, out, err = grade("rel_shift", "--file", tmp_path / "a.py")
    assert code == 2 and "symbolic link" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


DRAW = """
import hashlib, sys
from pathlib import Path
import grader
from grader.core import kinds
from grader.problem import problems
from grader.grading.engine import run_generated

problem = problems.load(Path(sys.argv[1]), sys.argv[2])
drawn = []
run_generated(type("Drawing", (), {"problem": problem})(), [], collect=drawn)
print(grader.__file__, hashlib.sha256("".join(kinds.args_digest(problem.args, a) for a in drawn).encode()).hexdigest())
"""


def test_the_same_inputs_are_drawn_from_a_checkout_a_wheel_and_compiled_files(tmp_path):
    wheel = tmp_path / "venv" / "lib" / "site-packages"  # installed: not "local" code to Hypothesis
    shutil.copytree(ROOT / "grader", wheel / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    compiled = tmp_path / "compiled"  # no sources to read at all
    shutil.copytree(wheel / "grader", compiled / "grader")
    compileall.compile_dir(compiled, quiet=1, legacy=True)  # module.pyc beside module.py: importable alone
    for source in compiled.rglob("*.py"):
        source.unlink()
    draws = {}
    for where, path in (("checkout", None), ("wheel", wheel), ("compiled", compiled)):
        env = {**os.environ, **({"PYTHONPATH": str(path)} if path else {})}
        done = subprocess.run([sys.executable, "-c", DRAW, str(ROOT), "rel_shift"], cwd=tmp_path, check=True,
                              capture_output=True, text=True, env=env)
        imported, draws[where] = done.stdout.split()
        assert imported.startswith(str(path or ROOT)), where
    assert draws["wheel"] == draws["checkout"] and draws["compiled"] == draws["checkout"]


def test_the_solutions_of_the_checkout_the_grader_runs_from_are_hidden_too(tmp_path):
    other = tmp_path / "second-copy"  # an instructor's second copy, graded by the grader installed from ROOT
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part / "rel_shift", other / part / "rel_shift")
    learner = tmp_path / "rel_shift.py"
    learner.write_text(REFERENCE.read_text() + SNOOP.format(patterns=[str(ROOT / "solutions" / "rel_shift" / "*.py")]))
    done = subprocess.run([sys.executable, "-m", "grader.cli", "rel_shift", "--file", str(learner), "--json"],
                          cwd=other, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GRADE_CACHE_DIR": str(tmp_path / "cache")})
    verdict = json.loads(done.stdout)
    assert verdict["isolation"] == "namespaces" and "SNOOPED" in verdict["output"]
    assert "READ" not in verdict["output"]


def test_a_module_too_large_to_be_one_is_refused_unread(grade, tmp_path):
    huge = tmp_path / "rel_shift.py"
    with open(huge, "wb") as f:
        f.truncate(submission.MAX_BYTES + 1)  # sparse: costs no disk
    code, _, err = grade("rel_shift", "--file", huge)
    assert code == 2 and "more than the" in err


LOOKUP = '''"""rel_shift as a table of the public inputs' answers: right wherever a learner can know the inputs."""

import numpy as np

TABLE = {table!r}


def rel_shift(seed, x):
    x = np.asarray(x, np.float32)
    found = TABLE.get((int(seed), x.shape, x.tobytes().hex()))
    return np.asarray(found if found is not None else np.zeros(x.shape[0] * x.shape[0]), np.float32)
'''


def test_a_table_of_the_public_inputs_passes_alone_and_fails_the_class(tmp_path, grade_json):
    import importlib.util

    from grader.problem import problems
    from grader.grading.engine import run_generated

    problem = problems.load(ROOT, "rel_shift")
    drawn: list[dict] = []
    run_generated(type("Drawing", (), {"problem": problem})(), [], collect=drawn)
    spec = importlib.util.spec_from_file_location("reference_rel_shift", REFERENCE)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    table = {(a["seed"], a["x"].shape, a["x"].tobytes().hex()): [float(v) for v in reference.rel_shift(a["seed"], a["x"])]
             for a in [ex.args for ex in problem.examples] + drawn}
    learner = tmp_path / "class" / "copier.py"
    learner.parent.mkdir()
    learner.write_text(LOOKUP.format(table=table))
    code, report = grade_json("rel_shift", "--file", learner)
    assert code == 0, report["message"]  # the learner's own runs: public inputs alone
    done = batch("rel_shift", learner.parent, "--out", tmp_path / "grades", "--quiet")
    assert done.returncode == 0, done.stderr
    verdict = json.loads((tmp_path / "grades" / "verdicts" / "copier.json").read_text())
    assert verdict["status"] == "fail"  # the class's verdicts also use inputs drawn from solutions/SECRET
    assert (ROOT / "solutions" / "SECRET").is_file()


FILL_CACHE = '''

def _fill():
    import os

    import jax

    folder = jax.config.jax_compilation_cache_dir
    for i in range(2):
        with open(os.path.join(folder, f"filler-{i}"), "wb") as f:
            f.truncate(200 << 20)  # sparse: no disk, but it counts
    return folder


_right = rel_shift


def rel_shift(seed, x):
    print("FILLED", _fill())
    return _right(seed, x)
'''


def test_what_learner_code_leaves_in_its_compile_cache_stays_bounded(grade_json, tmp_path):
    learner = tmp_path / "rel_shift.py"
    learner.write_text(REFERENCE.read_text() + FILL_CACHE)
    code, report = grade_json("rel_shift", "--file", learner)
    assert code == 0 and report["isolation"] == "namespaces"
    folder = next(line.split()[1] for line in report["output"].splitlines() if line.startswith("FILLED"))
    assert not Path(folder).exists()  # 400 MB left there: emptied once the run ended


VIEW = '''

import os as _os


def _seen(path):
    try:
        return sorted(_os.listdir(path))
    except OSError as exc:
        return exc.strerror


print("VIEW", {{"checkout": _seen({root!r}), "beside": _seen({beside!r}), "home": _seen({home!r}),
               "own": _seen(_os.path.dirname(__file__))}})
'''


def test_a_confined_worker_sees_only_what_it_is_allowed(grade_json, tmp_path):
    """The confined view is built from an allow-list: the system, the interpreter and its libraries, the
    grader's package, the problems and the graded file's own folder. Not the checkout's other folders (its
    solutions, its cache), not a folder beside the graded file's, not the home folder."""
    (tmp_path / "beside").mkdir()
    (tmp_path / "beside" / "alice.py").write_text("answers")
    lab = tmp_path / "lab"
    lab.mkdir()
    learner = lab / "rel_shift.py"
    learner.write_text(REFERENCE.read_text() + VIEW.format(root=str(ROOT), beside=str(tmp_path / "beside"),
                                                           home=os.path.expanduser("~")))
    code, report = grade_json("rel_shift", "--file", str(learner), "--no-cache")
    if report["isolation"] != "namespaces":
        pytest.skip("learner code is not confined here")
    assert (code, report["status"]) == (0, "pass"), report
    line = next(line for line in report["output"].splitlines() if line.startswith("VIEW "))
    view = eval(line.removeprefix("VIEW "))
    assert set(view["checkout"]) <= {"grader", "problems", ".venv"} and "problems" in view["checkout"], view
    assert view["beside"] == "No such file or directory", view
    home = Path(os.path.expanduser("~"))  # nothing of it but the way to the interpreter, where it lies there
    assert view["home"] == "No such file or directory" or (
        Path(sys.base_prefix).is_relative_to(home) and view["home"] == [Path(sys.base_prefix).relative_to(home).parts[0]])
    assert view["own"] == ["rel_shift.py"]


AS_USER = IN_USER_NAMESPACE  # with ID_MAP="1000 {real} 1": an ordinary user, uid 1000

WRONG = REFERENCE.read_text().replace("[1:]", "[:-1]", 1)


@pytest.mark.skipif(subprocess.run([sys.executable, "-c", AS_USER, "-c", "import os; assert os.getuid() == 1000"],
                                   capture_output=True, env=dict(os.environ, ID_MAP="1000 {real} 1")).returncode != 0,
                    reason="no user namespace to be a user in")
@pytest.mark.parametrize("namespaces", ["allowed", "refused"])
def test_an_ordinary_users_batch_holds_with_namespaces_and_without(tmp_path, namespaces):
    """The class workflow as an instructor who is not root runs it: with namespaces, and where the kernel
    refuses them (the grader then says so and has no other user to become). Links are rows, a wrong file
    fails, and a file that snoops reads no classmate and no gradebook."""
    klass, out = tmp_path / "class", tmp_path / "grades"
    klass.mkdir()
    (klass / "alice.py").write_bytes(REFERENCE.read_bytes())
    (klass / "bob.py").write_text(WRONG)
    (klass / "linked.py").symlink_to(REFERENCE)
    if namespaces == "allowed":  # unconfined code can read what its user can: only confinement hides classmates
        (klass / "snoop.py").write_text(REFERENCE.read_text() + SNOOP.format(patterns=[str(klass / "*.py"),
                                                                                     str(out / "*")]))
    env = dict(os.environ, REFUSE_NAMESPACES="1" if namespaces == "refused" else "0", ID_MAP="1000 {real} 1",
               GRADE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", AS_USER, "-m", "grader.cli", "batch", "rel_shift", str(klass),
                           "--out", str(out), "--jobs", "2", "--quiet"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert rows["alice"]["status"] == "pass" and rows["bob"]["status"] == "fail"
    assert rows["linked"]["status"] == "error" and "symbolic link" in rows["linked"]["message"]
    isolation = {json.loads((out / "verdicts" / f"{name}.json").read_text())["isolation"] for name in ("alice", "bob")}
    assert isolation == ({"namespaces"} if namespaces == "allowed" else {"none"})
    if namespaces == "allowed":
        printed = json.loads((out / "verdicts" / "snoop.json").read_text())["output"]
        assert "SNOOPED" in printed and "READ" not in printed, printed
