"""`grade handout`: the exercises without their solutions, graded with the same verdicts from recorded answers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from grader.explain import diagnosis
from grader.instructor import handout
from grader.problem import problems
from grader.grading.engine import Options, grade

SLUG = "rel_shift"  # the cheapest problem to record


def cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ))


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "class"
    done = cli("handout", str(out), SLUG, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return out


def verdict(root: Path, path: Path, fixed: bool = True):
    return grade(problems.load(root, SLUG), path, Options(), fixed=fixed, extra=partial(diagnosis.explain, name_only=True))


def test_a_handout_has_no_solutions_and_nothing_to_read_one_from(copy):
    assert not (copy / "solutions").exists()
    assert sorted(p.name for p in (copy / "problems").iterdir()) == [SLUG]
    reference = (ROOT / "solutions" / SLUG / f"{SLUG}.py").read_text()
    stub = (ROOT / "problems" / SLUG / f"{SLUG}.py").read_text()
    solution_lines = {line.strip() for line in reference.splitlines() if len(line.strip()) > 25} - set(stub.splitlines())
    solution_lines = {line for line in solution_lines if not line.startswith(("#", '"""')) and line not in stub}
    assert solution_lines  # the reference has lines of its own
    for path in copy.rglob("*"):
        if path.is_file() and path.suffix != ".npz":
            text = path.read_text(errors="replace")
            assert not [line for line in solution_lines if line in text], path
    with np.load(copy / "problems" / SLUG / handout.RECORD, allow_pickle=False) as data:  # arrays only, no pickle
        assert "meta" in data.files and all(data[name].dtype != object for name in data.files)
    assert (copy / ".grade" / "pristine" / f"{SLUG}.py").read_text() == stub
    # what its pyproject.toml names, and a learner's repository of it leaves their environment out
    assert (copy / "README.md").read_text() == (copy / "HANDOUT.md").read_text()
    assert ".venv/" in (copy / ".gitignore").read_text().splitlines()


def test_the_handout_gives_the_checkout_s_verdicts(copy):
    problem = problems.load(ROOT, SLUG)
    subjects = {**problem.variants("pitfalls"), **problem.variants("alternatives"), "reference": problem.reference}
    for name, path in subjects.items():
        full, hand = verdict(ROOT, path), verdict(copy, path)
        assert (hand.status, hand.pitfall and hand.pitfall.id) == (full.status, full.pitfall and full.pitfall.id), name
        assert hand.status == ("fail" if name in problem.variants("pitfalls") else "pass"), name


def test_on_generated_inputs_alone_the_smallest_failing_input_of_the_pool_stands_in_for_shrinking(copy):
    for name, path in problems.load(ROOT, SLUG).variants("pitfalls").items():
        full, hand = verdict(ROOT, path, fixed=False), verdict(copy, path, fixed=False)
        assert hand.status == "fail" and hand.pitfall is not None and hand.pitfall.id == name
        assert hand.counterexample.name == "generated"
        assert handout.case_size(hand.counterexample.args) <= handout.case_size(full.counterexample.args), name


def test_the_command_line_works_in_a_handout_and_refuses_what_needs_the_solutions(copy, tmp_path):
    done = cli(SLUG, cwd=copy / "problems")  # from a folder inside the handout
    assert done.returncode == 1 and "NOT STARTED" in done.stdout
    done = cli(SLUG, "--file", str(ROOT / "solutions" / SLUG / f"{SLUG}.py"), cwd=copy)
    assert done.returncode == 0 and "PASS" in done.stdout
    done = cli("check", cwd=copy)
    assert done.returncode == 2 and "handout" in done.stderr
    done = cli(SLUG, "--part", "Anything", cwd=copy)
    assert done.returncode == 2 and "full checkout" in done.stderr
    assert cli("list", cwd=copy).returncode == 0
    class_folder = tmp_path / "class"  # a class graded from the handout, as a teaching assistant would
    for student, source in (("ada", ROOT / "solutions" / SLUG / f"{SLUG}.py"),
                            ("bo", copy / "problems" / SLUG / f"{SLUG}.py")):
        (class_folder / student).mkdir(parents=True)
        (class_folder / student / f"{SLUG}.py").write_text(source.read_text())
    done = cli("batch", SLUG, str(class_folder), "--jobs", "2", "--quiet", "--out", str(tmp_path / "grades"), cwd=copy)
    assert done.returncode == 0, done.stderr
    rows = (tmp_path / "grades" / "gradebook.csv").read_text().splitlines()
    assert [row.split(",")[:4] for row in rows[1:]] == [["ada", str(class_folder / "ada" / f"{SLUG}.py"), "pass", "1"],
                                                        ["bo", str(class_folder / "bo" / f"{SLUG}.py"), "not_started", "0"]]
    done = cli("handout", str(copy), SLUG, cwd=ROOT)  # never over an existing folder
    assert done.returncode == 2 and "exists" in done.stderr
    done = cli("handout", str(tmp_path / "x"), "no_such_problem", cwd=ROOT)
    assert done.returncode == 2 and not (tmp_path / "x").exists()


def test_a_damaged_record_is_a_broken_problem_not_a_verdict(copy, tmp_path):
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(copy, damaged)
    (damaged / "problems" / SLUG / handout.RECORD).write_bytes(b"not an archive")
    done = cli(SLUG, "--file", str(ROOT / "solutions" / SLUG / f"{SLUG}.py"), cwd=damaged)
    assert done.returncode == 2 and handout.RECORD in done.stderr


def test_a_record_edited_to_other_answers_is_a_broken_problem_not_a_pass(copy, tmp_path):
    import shutil

    edited = tmp_path / "edited"
    shutil.copytree(copy, edited)
    record = edited / "problems" / SLUG / handout.RECORD
    with np.load(record, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    for name in [n for n in arrays if n.startswith("out_reference_")]:
        arrays[name] = -arrays[name]  # every recorded answer negated: a wrong file that negates would pass
    np.savez(record, **arrays)
    done = cli(SLUG, "--file", str(ROOT / "solutions" / SLUG / f"{SLUG}.py"), cwd=edited)
    assert done.returncode == 2 and "does not give the output the statement prints" in done.stderr


def test_a_statement_that_suggests_part_says_what_a_handout_does_instead(copy):
    for slug in ("t5_attention", "t5_forward"):
        carried = handout.handout_statement((ROOT / "problems" / slug / "README.md").read_text())
        assert carried.rstrip().endswith(handout.HANDOUT_PART_NOTE), slug
    statement = (ROOT / "problems" / SLUG / "README.md").read_text()  # nothing of the kind in it
    assert (copy / "problems" / SLUG / "README.md").read_text() == handout.handout_statement(statement) == statement


def test_a_handout_made_where_a_kata_was_solved_in_place_ships_the_untouched_stub(tmp_path):
    """An instructor who solved the kata in their checkout (and kept a reset's backup of it): the handout
    holds the untouched stub, from git, says so, and carries no backup; graded there, it is not started."""
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(checkout)], check=True)
    stub = checkout / "problems" / SLUG / f"{SLUG}.py"
    untouched = stub.read_bytes()
    solved = (ROOT / "solutions" / SLUG / f"{SLUG}.py").read_bytes()
    stub.write_bytes(solved)
    stub.with_name(f"{SLUG}.py.bak-1").write_bytes(solved)
    out = tmp_path / "class"
    done = cli("handout", str(out), SLUG, cwd=checkout)
    assert done.returncode == 0, done.stderr
    assert "edited in this checkout" in done.stderr and "untouched stub" in done.stderr
    for path in (out / "problems" / SLUG / f"{SLUG}.py", out / ".grade" / "pristine" / f"{SLUG}.py"):
        assert path.read_bytes() == untouched, path
    assert not list(out.rglob("*.bak-*"))
    graded = cli(SLUG, cwd=out)
    assert graded.returncode == 1 and "NOT STARTED" in graded.stdout, graded.stdout


def test_a_handout_without_an_untouched_stub_to_ship_is_refused(tmp_path):
    """No git, no kept copy, and the stub solved: nothing untouched to hand out, so nothing is written."""
    checkout = tmp_path / "checkout"
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part / SLUG, checkout / part / SLUG)
    (checkout / "problems" / SLUG / f"{SLUG}.py").write_bytes((ROOT / "solutions" / SLUG / f"{SLUG}.py").read_bytes())
    out = tmp_path / "class"
    done = cli("handout", str(out), SLUG, cwd=checkout)
    assert done.returncode == 2 and f"no untouched stub of {SLUG}" in done.stderr, done.stderr
    assert not out.exists() and not out.with_name("class.partial").exists()
