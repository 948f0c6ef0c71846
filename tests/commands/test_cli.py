"""The `grade` command's contract: JSON shape, exit codes, usage errors, list, replay."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import REFERENCE, ROOT
from grader.core.verdict_report import SCHEMA
from grader.instructor import check
from grader.problem import problems, variant
from grader.problem.checkout import cache_folder, slugs
from grader.render import report as report_module
from grader.grading.trusted import ReferenceError
from grader.core.verdict import Outcome, Pitfall, Status, Verdict


def test_unknown_problem_is_a_usage_error_naming_the_problems(grade):
    code, out, err = grade("t5_relative_posx")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "t5_relative_posx" in err and "rmsnorm" in err and "mini_t5_forward" in err


@pytest.mark.grading
def test_missing_file_is_a_usage_error(grade, tmp_path):
    code, _, err = grade("rmsnorm", "--file", tmp_path / "nope.py")
    assert code == 2 and "nope.py" in err


@pytest.mark.grading
def test_pass_json_has_the_contract_keys_and_exit_zero(grade_json):
    code, report = grade_json("t5_relative_pos", "--file", REFERENCE["t5_relative_pos"])
    assert code == 0
    jsonschema.validate(report, SCHEMA)
    assert set(report) == set(SCHEMA["required"])
    assert report["status"] == "pass" and report["counterexample"] is None and report["pitfall"] is None
    assert report["examples_run"] > 10
    assert all({"name", "status", "message"} <= set(check) for check in report["checks"])


@pytest.mark.grading
def test_fail_json_carries_the_counterexample_and_its_replay(grade_json, grade, tmp_path):
    wrong = tmp_path / "t5_relative_pos.py"
    wrong.write_text(REFERENCE["t5_relative_pos"].read_text().replace("max_distance / max_exact", "max_distance / (max_exact + 1)"))
    code, report = grade_json("t5_relative_pos", "--file", wrong)
    assert code == 1 and report["status"] == "fail"
    cx = report["counterexample"]
    assert {"inputs", "expected", "actual", "diff", "replay"} <= set(cx)
    assert cx["expected"] != cx["actual"]
    replay = cx["replay"].split()
    assert replay[:2] == ["grade", "t5_relative_pos"] and "--replay" in replay
    code, replayed = grade_json(*replay[1:])
    assert code == 1 and replayed["examples_run"] == 1
    assert replayed["counterexample"]["inputs"] == cx["inputs"]


@pytest.mark.grading
def test_human_report_shows_the_matrix_in_its_natural_shape(grade, tmp_path):
    wrong = tmp_path / "t5_relative_pos.py"
    wrong.write_text(REFERENCE["t5_relative_pos"].read_text() + "\n\n_r = t5_relative_pos\n\n\ndef t5_relative_pos(seed, T, num_buckets, max_distance):\n    return _r(seed, T, num_buckets, max_distance).at[1].add(1)\n")
    code, out, _ = grade("t5_relative_pos", "--file", wrong)
    assert code == 1
    assert "FAIL" in out.splitlines()[0]
    assert "Expected (" in out and "Got:" in out and "Mismatches (x):" in out
    assert "i=0" in out and "j - i = 1" in out
    assert "Largest absolute error" in out


@pytest.mark.grading
def test_untouched_stub_is_not_started(grade_json):
    code, report = grade_json("t5_relative_pos")
    assert (code, report["status"]) == (1, "not_started")
    assert "TODO" in report["message"]


@pytest.mark.grading
def test_grade_works_from_a_subfolder(grade):
    code, out, _ = grade("rmsnorm", "--file", REFERENCE["rmsnorm"], cwd=ROOT / "problems" / "rmsnorm")
    assert code == 0 and "PASS" in out


LEARNING_ORDER = ["sinusoidal_pe", "t5_relative_pos", "t5_causal_relative_pos", "t5_relative_bias", "rmsnorm", "t5_attention",
                  "shaw_relative_attention", "rel_shift", "transformer_xl_attention", "mini_t5_forward", "t5_forward",
                  "alibi_bias", "alibi_attention", "rope", "rope_attention", "rope_scaled_angles"]


@pytest.mark.grading
def test_list_shows_every_problem_and_its_last_status(grade, tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part, checkout / part)
    code, out, _ = grade("list", cwd=checkout)
    assert code == 0
    *rows, progress = out.splitlines()
    assert [line.split()[0] for line in rows] == LEARNING_ORDER
    assert progress == f"0 of {len(LEARNING_ORDER)} passed"
    assert out.count("not graded yet") == len(LEARNING_ORDER)
    grade("t5_relative_pos", cwd=checkout)
    _, out, _ = grade("list", cwd=checkout)
    assert "not_started" in [line for line in out.splitlines() if line.startswith("t5_relative_pos")][0]
    stub = checkout / "problems" / "t5_relative_pos" / "t5_relative_pos.py"
    stub.write_text(stub.read_text() + "\n# edited\n")
    _, out, _ = grade("list", cwd=checkout)
    assert "edited since last grade" in out


def test_the_learning_order_is_each_problems_order_then_its_name(tmp_path):
    for slug, order in (("b", "order = 2\n"), ("a", "order = 2\n"), ("c", "order = 1.5\n"), ("d", ""), ("e", "order = [")):
        (tmp_path / "problems" / slug).mkdir(parents=True)
        (tmp_path / "problems" / slug / "problem.toml").write_text(f'title = "{slug}"\n{order}')
    assert slugs(tmp_path) == ["c", "a", "b", "d", "e"]  # no order, or an unreadable file: last


@pytest.mark.grading
def test_new_writes_a_problem_that_checks_at_once_and_says_what_is_left(grade, tmp_path, monkeypatch):
    for part in ("problems", "solutions"):
        (tmp_path / part).mkdir()
    code, out, _ = grade("new", "alibi_bias", cwd=tmp_path)
    assert code == 0 and "solutions/alibi_bias/pitfalls.toml" in out
    rows = {r.item: r for r in check.check_problem(tmp_path, "alibi_bias")}
    failed = {item for item, r in rows.items() if not r.ok}
    assert failed == {"authoring", "golden outputs"}, rows
    assert "problems/alibi_bias/README.md (lines 1, 3," in rows["authoring"].detail
    assert "problems/alibi_bias/hints.toml (lines 5, 8, 11)" in rows["authoring"].detail and rows["hints"].ok
    assert "--update-golden" in rows["golden outputs"].detail
    assert {"reference passes", "stub is not_started", "pitfall doubled", "alternative numpy_float64"} <= set(rows)
    # the author writes every place marked, stores the golden outputs: nothing is left
    for path in list((tmp_path / "problems").rglob("*")) + list((tmp_path / "solutions").rglob("*")):
        if path.is_file():
            path.write_text(path.read_text().replace("TODO(author)", "written"))
    rows = check.check_problem(tmp_path, "alibi_bias", update_golden=True)
    assert all(r.ok for r in rows), [r for r in rows if not r.ok]
    # nothing is ever overwritten; a name that cannot be a module is refused
    readme = tmp_path / "problems" / "alibi_bias" / "README.md"
    before = readme.read_text()
    code, _, err = grade("new", "alibi_bias", cwd=tmp_path)
    assert code == 2 and "already exist" in err and readme.read_text() == before
    code, _, err = grade("new", "Alibi-Bias", cwd=tmp_path)
    assert code == 2 and "cannot be a problem's name" in err and not (tmp_path / "problems" / "Alibi-Bias").exists()


def test_json_stdout_is_one_object_even_for_usage_errors(grade):
    code, out, _ = grade("no_such_problem", "--json")
    assert code == 2
    assert json.loads(out)["status"] == "error"


# -- the replay hint: the command as the user ran it -----------------------------------------------------

def script(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def replay_words(monkeypatch, argv0: str, orig_argv: list[str] | None = None) -> list[str]:
    monkeypatch.setattr(sys, "argv", [argv0, "t5_relative_pos"])
    monkeypatch.setattr(sys, "orig_argv", orig_argv or [sys.executable, argv0, "t5_relative_pos"])
    t5 = problems.load(ROOT, "t5_relative_pos")
    return shlex.split(report_module.replay_command(t5, Path("/cases/t5.json"), None))


def test_the_replay_says_grade_where_the_path_finds_the_grade_that_ran(monkeypatch, tmp_path):
    grade = script(tmp_path / "bin" / "grade")
    monkeypatch.setenv("PATH", f"{grade.parent}{os.pathsep}/usr/bin")
    assert replay_words(monkeypatch, str(grade)) == ["grade", "t5_relative_pos", "--replay", "/cases/t5.json"]


@pytest.mark.parametrize("on_path", ["nothing", "another grade"])
def test_the_replay_says_the_path_typed_relative_to_here_where_the_path_finds_another(monkeypatch, tmp_path, on_path):
    checkout = tmp_path / "checkout"
    grade = script(checkout / ".venv" / "bin" / "grade")
    other = script(tmp_path / "elsewhere" / "grade")
    monkeypatch.setenv("PATH", str(other.parent) if on_path == "another grade" else "/nonexistent")
    monkeypatch.chdir(checkout)
    assert replay_words(monkeypatch, ".venv/bin/grade")[0] == ".venv/bin/grade"
    assert replay_words(monkeypatch, str(grade))[0] == ".venv/bin/grade"  # typed in full, still under here
    monkeypatch.chdir(checkout / ".venv" / "bin")
    assert replay_words(monkeypatch, "./grade")[0] == "./grade"  # never a bare name the PATH would look up


def test_the_replay_says_an_absolute_path_for_a_grade_outside_here(monkeypatch, tmp_path):
    grade = script(tmp_path / "my checkout" / ".venv" / "bin" / "grade")
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.chdir(tmp_path / "work")
    words = replay_words(monkeypatch, "../my checkout/.venv/bin/grade")
    assert words[0] == str(grade)  # quoted in the command, one word again once split
    assert report_module.replay_command(problems.load(ROOT, "t5_relative_pos"), Path("/c.json"), None).startswith(
        shlex.quote(str(grade)) + " t5_relative_pos")


@pytest.mark.parametrize("python, expected", [(".venv/bin/python", ".venv/bin/python"), ("python3", "python3")])
def test_the_replay_of_python_m_grader_cli_names_that_python(monkeypatch, python, expected):
    monkeypatch.chdir(ROOT)
    words = replay_words(monkeypatch, str(ROOT / "grader" / "cli.py"), [python, "-m", "grader.cli", "t5_relative_pos"])
    assert words[:4] == [expected, "-m", "grader.cli", "t5_relative_pos"]


def test_the_replay_says_grade_when_called_in_process(monkeypatch):
    assert replay_words(monkeypatch, str(ROOT / ".venv" / "bin" / "pytest"))[0] == "grade"


# -- grade check: the rows after a broken one ------------------------------------------------------------

class FakeTrusted:
    """Stands for the reference's worker; counts how many were started and closed."""

    started: list = []

    def __init__(self, problem, golden_pitfalls=True):
        self.closed = False
        FakeTrusted.started.append(self)

    def close(self):
        self.closed = True


@pytest.fixture
def checking(tmp_path, monkeypatch):
    """``checking(raising=..., candidates=..., reference=...)`` -> (rows of `grade check t5_relative_pos`
    on a copy of the problem, the keys graded), with every grading faked: instant, no worker."""
    root = tmp_path / "checkout"
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part / "t5_relative_pos", root / part / "t5_relative_pos")
    monkeypatch.chdir(root)
    FakeTrusted.started = []
    monkeypatch.setattr(check, "Trusted", FakeTrusted)
    monkeypatch.setattr(check, "check_outputs", lambda problem, trusted, update: [])

    def run(raising=(), candidates=None, reference=Status.PASS):
        graded = []

        def grade(problem, path, options, extra=None, trusted=None, subject_key=None, fixed=True):
            key = subject_key or "stub"
            graded.append(key)
            if key in raising:
                raise ReferenceError(f"the worker running the reference of {problem.slug} failed: killed")
            if key == "stub":
                return Verdict(problem.slug, Status.NOT_STARTED, "fill in the TODO")
            if key == "reference":
                return Verdict(problem.slug, reference, "as it should")
            if key.startswith("alternative_"):
                return Verdict(problem.slug, Status.PASS, "all cases match")
            name = key.removeprefix("pitfall_")
            outcome = Outcome("worked example", {}, Status.FAIL, "2 of 16 values differ")
            if candidates and name in candidates:
                return Verdict(problem.slug, Status.FAIL, "differs", counterexample=outcome,
                               pitfall_candidates=candidates[name])
            return Verdict(problem.slug, Status.FAIL, "differs", counterexample=outcome, pitfall=Pitfall(name, "m"))

        monkeypatch.setattr(check, "grade", grade)
        rows = check.check_problem(root, "t5_relative_pos")
        assert all(t.closed for t in FakeTrusted.started)
        return rows, graded

    run.root = root
    return run


def pitfalls_and_alternatives() -> list[str]:
    t5 = problems.load(ROOT, "t5_relative_pos")
    return [f"pitfall {n}" for n in t5.variants("pitfalls")] + [f"alternative {n}" for n in t5.variants("alternatives")]


def test_check_passes_every_row_when_nothing_is_broken(checking):
    rows, _ = checking()
    assert all(r.ok for r in rows), [r for r in rows if not r.ok]
    assert set(pitfalls_and_alternatives()) <= {r.item for r in rows}


def test_check_names_the_variants_a_pitfall_cannot_be_told_from(checking):
    rows, _ = checking(candidates={"no_clamp": ["no_clamp", "clamp_to_half"], "no_abs": []})
    by_item = {r.item: r for r in rows}
    row = by_item["pitfall no_clamp"]
    assert not row.ok
    assert ("named none: its outputs are the same as those of clamp_to_half on every input tried (two variants "
            "that cannot be told apart; remove one, or draw inputs that separate them)") in row.detail
    assert by_item["pitfall no_abs"].detail.endswith(", named none")  # no variant agreed: nothing to list
    assert not any("None" in r.detail for r in rows)


def test_naming_lists_every_variant_that_collides():
    verdict = Verdict("t5_relative_pos", Status.FAIL, "differs", pitfall_candidates=["a", "b", "c"])
    assert check.naming(verdict, "a").startswith("named none: its outputs are the same as those of b and c on every "
                                                 "input tried (3 variants that cannot be told apart; keep one,")
    assert check.naming(Verdict("x", Status.FAIL, "", pitfall=Pitfall("b", "m")), "a") == "named b"


def test_a_broken_variant_file_fails_its_row_and_the_others_are_still_graded(checking):
    pitfalls = checking.root / "solutions" / "t5_relative_pos" / "pitfalls"
    pitfalls.mkdir()
    generated = problems.load(checking.root, "t5_relative_pos").variants("pitfalls")["no_clamp"].read_text()
    (pitfalls / "without_message.py").write_text(generated.replace("MESSAGE = ", "_UNUSED = "))
    (pitfalls / "unparsable.py").write_text("def t5_relative_pos(seed, T, num_buckets, max_distance)\n")
    rows, graded = checking()
    by_item = {r.item: r for r in rows}
    assert not by_item["pitfall without_message"].ok and "MESSAGE" in by_item["pitfall without_message"].detail
    assert not by_item["pitfall unparsable"].ok
    assert "pitfall_without_message" not in graded and "pitfall_unparsable" not in graded
    others = [item for item in pitfalls_and_alternatives() if item not in ("pitfall without_message", "pitfall unparsable")]
    assert len(others) >= 10 and all(by_item[item].ok for item in others + ["reference passes", "stub is not_started"])
    assert not any("skipped" in r.detail for r in rows)


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.replace("large = jnp.minimum(large, nb_half - 1)", "large = jnp.minimum(large, nb_half - 2)", 1),
     "pitfall 'clamp_to_half': replace[0].old occurs 0 times in solutions/t5_relative_pos/t5_relative_pos.py"),
    (lambda t: t.replace('id = "no_abs"', 'id = "no_clamp"'), "pitfall 'no_clamp' is declared twice"),
    (lambda t: t.replace('id = "no_abs"', 'id = "No-abs"'), "pitfall[3].id must be a lower-case Python name"),
    (lambda t: t.replace('id = "no_abs"', 'id = "no_abs"\nweight = 2'), "pitfall[3].weight is not a key of a pitfall"),
    (lambda t: t + '\n[[pitfall]]\nid = "empty"\ndoc = "d"\nmessage = "m"\nreplace = []\n',
     "pitfall 'empty': replace must be a list of one or more"),
])
def test_a_broken_pitfalls_toml_is_one_sentence_naming_the_entry(checking, edit, says):
    toml = checking.root / "solutions" / "t5_relative_pos" / "pitfalls.toml"
    toml.write_text(edit(toml.read_text()))
    rows, graded = checking()
    assert [(r.item, r.ok) for r in rows] == [("metadata", False)] and not graded
    assert rows[0].detail.startswith("solutions/t5_relative_pos/pitfalls.toml: ") and says in rows[0].detail


@pytest.mark.grading
def test_a_declared_pitfall_is_the_reference_with_its_replacements(checking):
    problem = problems.load(checking.root, "t5_relative_pos")
    path = problem.variants("pitfalls")["clamp_to_half"]
    reference = problem.reference.read_text()
    text = path.read_text()
    assert path.is_relative_to(cache_folder(checking.root))  # kept with the caches, out of solutions/
    assert "jnp.minimum(large, nb_half)  # MISTAKE" in text and "jnp.minimum(large, nb_half - 1)" not in text
    body = text.split("\n\nMESSAGE = ")[0].split("\n", 2)[2]  # without the two header lines
    assert body == reference.rstrip("\n").replace("jnp.minimum(large, nb_half - 1)  # far offsets share the last bucket",
                                                 "jnp.minimum(large, nb_half)  # MISTAKE: should be nb_half - 1")
    assert variant.read_constant(path, "MESSAGE").startswith("Far-away offsets spill over")
    # a file and an entry of the same name: the instructor keeps one
    (problem.solution_folder / "pitfalls").mkdir()
    (problem.solution_folder / "pitfalls" / "no_abs.py").write_text(text)
    with pytest.raises(problems.ProblemError, match="pitfall 'no_abs' is also the file solutions/t5_relative_pos/pitfalls/no_abs.py"):
        problems.load(checking.root, "t5_relative_pos").variants("pitfalls")


def test_an_exception_while_grading_one_variant_fails_that_row_alone(checking):
    rows, graded = checking(raising={"pitfall_no_clamp"})
    by_item = {r.item: r for r in rows}
    assert not by_item["pitfall no_clamp"].ok
    assert by_item["pitfall no_clamp"].detail == ("grading it raised: the worker running the reference of "
                                                  "t5_relative_pos failed: killed")
    assert all(by_item[item].ok for item in pitfalls_and_alternatives() if item != "pitfall no_clamp")
    assert len(FakeTrusted.started) == 2  # the next variant got a fresh worker


def test_a_reference_that_raises_ends_the_checks_with_a_row_saying_what_was_skipped(checking):
    rows, graded = checking(raising={"reference"})
    assert graded == ["reference"]
    assert (rows[-1].item, rows[-1].ok) == ("reference runs", False)
    assert rows[-1].detail == ("skipped the remaining checks of t5_relative_pos: the worker running the reference "
                               "of t5_relative_pos failed: killed")


def test_a_reference_that_does_not_pass_ends_the_checks_with_a_row_saying_so(checking):
    rows, graded = checking(reference=Status.ERROR)
    assert graded == ["reference"]
    assert [(r.item, r.ok) for r in rows[-2:]] == [("reference passes", False), ("remaining checks", False)]
    assert rows[-1].detail.startswith("skipped the remaining checks of t5_relative_pos: ")


def test_a_broken_strategy_ends_the_checks_before_anything_is_graded(checking):
    (checking.root / "problems" / "t5_relative_pos" / "strategies.py").write_text(
        "def inputs():\n    raise RuntimeError('no inputs today')\n")
    rows, graded = checking()
    assert graded == []
    assert not {r.item: r for r in rows}["strategy"].ok
    assert (rows[-1].item, rows[-1].detail) == ("remaining checks", "skipped the remaining checks of "
                                                "t5_relative_pos: the strategy check failed above")


@pytest.mark.grading
def test_a_replay_shows_what_its_own_case_printed(grade, tmp_path):
    """Naming the mistake runs the learner's code on further inputs; a replay leaves out what those printed."""
    problem = problems.load(ROOT, "rel_shift")
    source = problem.variants("pitfalls")["drops_last_row"].read_text()
    learner = tmp_path / "rel_shift.py"
    learner.write_text(source.replace("def rel_shift(seed, x):", "def rel_shift(seed, x):\n    print('CASE', x.shape)", 1))
    code, out, _ = grade("rel_shift", "--file", learner)
    assert code == 1 and "Likely mistake (drops_last_row)" in out and out.count("  | CASE") > 1
    replay = out.split("--replay ")[1].split()[0]
    code, out, _ = grade("rel_shift", "--file", learner, "--replay", replay)
    assert code == 1 and "Likely mistake (drops_last_row)" in out  # still named
    assert out.count("  | CASE") == 1 and "a replay shows its own case's" in out


@pytest.mark.grading
def test_a_failing_grade_prints_its_verdict_line_before_it_explains_it(tmp_path):
    """The verdict line comes as soon as the first failing input is known: the command is still explaining
    it (shrinking, naming the mistake) when the line can be read; the report then has that line once."""
    wrong = tmp_path / "t5_relative_pos.py"
    wrong.write_text((ROOT / "tests/submissions/t5_relative_pos/log2_over_natural_log.py").read_text())
    command = subprocess.Popen([sys.executable, "-m", "grader.cli", "t5_relative_pos", "--file", str(wrong)],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"})
    first = command.stdout.readline()
    still_running = command.poll() is None
    rest = command.stdout.read()
    assert command.wait() == 1
    assert first.startswith("t5_relative_pos: FAIL - ") and still_running
    assert "Called t5_relative_pos(" in rest
    assert not any(line.startswith("t5_relative_pos: ") for line in rest.splitlines())


@pytest.mark.grading
def test_a_plain_grade_imports_no_matplotlib():
    wrong = ROOT / "tests" / "submissions" / "rel_shift" / "zero_appended_after_rows.py"
    code = ("import sys; from grader.cli import main; main(['rel_shift', '--file', sys.argv[1]]); "
            "print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(wrong)], capture_output=True, text=True, cwd=ROOT,
                          stdin=subprocess.DEVNULL)
    assert "rel_shift: FAIL" in done.stdout and done.stdout.splitlines()[-1] == "False"


@pytest.mark.grading
def test_html_writes_a_page_under_grade_named_for_the_problem_and_says_where(grade):
    wrong = ROOT / "tests" / "submissions" / "rel_shift" / "zero_appended_after_rows.py"
    page = ROOT / ".grade" / "rel_shift.html"
    page.unlink(missing_ok=True)
    code, out, _ = grade("rel_shift", "--file", wrong, "--html")
    assert code == 1 and out.startswith("rel_shift: FAIL") and "Mismatches (x):" in out
    assert out.rstrip().endswith("The report as a page: .grade/rel_shift.html") and page.is_file()
    assert 'src="data:image/png;base64,' in page.read_text()
    for other in (["--json"], ["--format", "exercism"], ["--output", "x.json"]):
        with pytest.raises(SystemExit):
            grade("rel_shift", "--file", wrong, "--html", *other)
