"""The learner's commands (`grade watch`, `hint`, `reset`, `solution`, `next`, `list`'s progress), the "did you
mean" for a misspelt problem, colour, and `--format exercism`: through the command line, in subprocesses,
in a temporary copy of the checkout."""

from __future__ import annotations

import json
import os
import pty
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, left_behind, live_processes
from grader.commands import learner
from grader.problem import problems
from grader.problem.checkout import cache_folder, slugs
PYTHON = ROOT / ".venv" / "bin" / "python"
SLUGS = slugs(ROOT)  # the learning order
N = len(SLUGS)
BEFORE = SLUGS[:SLUGS.index("t5_relative_pos")]  # passed in the watched checkout before the watch starts
RUN_HEADER = re.compile(r"^== grade watch: run (\d+): (\w+) ", re.MULTILINE)
ESCAPE = "\x1b["


def make_checkout(folder: Path) -> Path:
    """A copy of the checkout's problems, solutions and grader: what a learner's clone holds."""
    for part in ("problems", "solutions", "grader"):
        shutil.copytree(ROOT / part, folder / part, ignore=shutil.ignore_patterns("__pycache__", "*.bak-*"))
    shutil.copy(ROOT / "pyproject.toml", folder)
    return folder


def environment(**changes: str | None) -> dict:
    """This environment (the session's private cache included), unbuffered output off, colour unset, and
    ``changes`` (None removes a variable)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "NO_COLOR", "FORCE_COLOR")}
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def grade(checkout: Path, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m grader.cli <argv>`` run in ``checkout``, its output piped."""
    return subprocess.run([str(PYTHON), "-m", "grader.cli", *argv], cwd=checkout, env=env or environment(),
                          capture_output=True, text=True, timeout=120)


def stub(checkout: Path, slug: str) -> Path:
    return checkout / "problems" / slug / f"{slug}.py"


def reference(slug: str) -> str:
    return (ROOT / "solutions" / slug / f"{slug}.py").read_text()


def state(checkout: Path) -> dict:
    return json.loads((checkout / ".grade" / "state.json").read_text())


class Watch:
    """`grade watch <argv>` running in ``checkout``: its output read as it comes."""

    def __init__(self, checkout: Path, *argv: str, env: dict | None = None):
        # SIGINT with its default action, as from a terminal (a suite run in the background ignores it).
        self.process = subprocess.Popen([str(PYTHON), "-m", "grader.cli", "watch", *argv], cwd=checkout,
                                        env=env or environment(), stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True,
                                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: queue.Queue = queue.Queue()
        self.output = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def until(self, pattern: str, count: int = 1, seconds: float = 60) -> str:
        """Reads until ``pattern`` has occurred ``count`` times in the whole output; the output so far."""
        deadline = time.monotonic() + seconds
        while len(re.findall(pattern, self.output)) < count:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"no {pattern!r} (x{count}) in the output of grade watch:\n{self.output}")
            self.output += line
        return self.output

    def finish(self, seconds: float = 60) -> int:
        code = self.process.wait(timeout=seconds)
        while (line := self.lines.get(timeout=5)) is not None:
            self.output += line
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# -- grade watch --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    """A checkout where `grade watch --max-runs 3` (no problem named, FORCE_COLOR=1) graded the first problem's
    stub, then its reference once saved over the stub, then moved on: (the checkout, the watch's output)."""
    checkout = make_checkout(tmp_path_factory.mktemp("watched"))
    (checkout / ".grade").mkdir()
    (checkout / ".grade" / "state.json").write_text(json.dumps({slug: {"status": "pass", "passed": True}
                                                                for slug in BEFORE}))
    watch = Watch(checkout, "--max-runs", "3", env=environment(FORCE_COLOR="1"))
    try:
        watch.until(r"Watching problems/t5_relative_pos/t5_relative_pos\.py \(file-system events\)")
        target = stub(checkout, "t5_relative_pos")
        wrong = reference("t5_relative_pos").replace("nb_half - 1)", "nb_half)")
        for n in range(3):  # saves in quick succession: one run, of the last
            target.write_text(f"{wrong}\n# save {n}\n")
        target.write_text(reference("t5_relative_pos"))
        assert watch.finish() == 0
    finally:
        watch.kill()
    return checkout, watch.output


@pytest.mark.grading
def test_watch_regrades_on_save_and_moves_on_after_a_pass(watched):
    checkout, output = watched
    runs = RUN_HEADER.findall(output)
    assert runs == [("1", "t5_relative_pos"), ("2", "t5_relative_pos"), ("3", "t5_causal_relative_pos")], output
    first, second, third = re.split(RUN_HEADER, output)[1:][2::3]
    assert "t5_relative_pos: \x1b[33mNOT STARTED\x1b[0m - " in first
    assert "t5_relative_pos: \x1b[32mPASS\x1b[0m - " in second and "FAIL" not in output
    assert "t5_relative_pos passes. Next in the learning order: t5_causal_relative_pos" in second
    assert "t5_causal_relative_pos: \x1b[33mNOT STARTED\x1b[0m" in third
    assert "\x1b[2J" not in output  # the screen is cleared only on a terminal
    assert state(checkout)["t5_relative_pos"]["passed"] is True
    counts = re.findall(r"^== grade watch: run \d+: \w+ \([^)]*\); (\d+) of (\d+) passed ==$", output, re.MULTILINE)
    assert [int(n) - len(BEFORE) for n, _ in counts] == [0, 0, 1] and {int(t) for _, t in counts} == {N}


@pytest.mark.grading
def test_watch_polls_debounces_stays_on_a_named_problem_and_stops_cleanly_on_ctrl_c(tmp_path):
    checkout = make_checkout(tmp_path)
    before = live_processes()
    watch = Watch(checkout, "rel_shift", "--poll", env=environment(NO_COLOR="1", FORCE_COLOR="1"))
    try:
        watch.until(r"Watching problems/rel_shift/rel_shift\.py \(polling every 0\.3 s\)")
        target = stub(checkout, "rel_shift")
        wrong = reference("rel_shift").replace("[:, :T]", "[:, -T:]")
        for n in range(4):
            target.write_text(f"{wrong}\n# save {n}\n")
        target.write_text(reference("rel_shift"))
        watch.until(r"Watching problems/rel_shift", count=2)
        time.sleep(0.7)  # two polls and more: nothing more to grade
        watch.process.send_signal(signal.SIGINT)
        assert watch.finish(seconds=20) == 0
    finally:
        watch.kill()
    assert RUN_HEADER.findall(watch.output) == [("1", "rel_shift"), ("2", "rel_shift")], watch.output
    assert "rel_shift: NOT STARTED - " in watch.output and "rel_shift: PASS - " in watch.output
    assert "FAIL" not in watch.output and ESCAPE not in watch.output  # NO_COLOR wins over FORCE_COLOR
    assert watch.output.rstrip().endswith("Stopped watching.")
    assert left_behind(before, cache_folder(ROOT)) == set()


class FakeWatchfiles:
    """watchfiles whose file-system events cannot start (as when inotify's limit is reached); its
    polling is the real one."""

    def __init__(self):
        import watchfiles

        self.real = watchfiles.watch
        self.calls: list = []

    def watch(self, *paths, **options):
        self.calls.append(options.get("force_polling"))
        if not options.get("force_polling"):
            raise OSError("OS file watch limit reached")
        return self.real(*paths, **options)


def waiting_for_a_change(watcher: learner.Watcher, path: Path) -> threading.Thread:
    waiting = threading.Thread(target=watcher.wait_for_change, args=(learner.file_digest(path),), daemon=True)
    waiting.start()
    time.sleep(0.5)
    assert waiting.is_alive()  # nothing changed yet
    path.write_text(path.read_text() + "\n# edited\n")
    waiting.join(timeout=15)
    return waiting


def test_watch_falls_back_to_polling_when_events_cannot_start(tmp_path, monkeypatch, capsys):
    pytest.importorskip("watchfiles")
    fake = FakeWatchfiles()
    monkeypatch.setattr("watchfiles.watch", fake.watch)
    checkout = make_checkout(tmp_path)
    watcher = learner.Watcher(checkout, "rel_shift", None, follow=False, mode="events", max_runs=None)
    assert not waiting_for_a_change(watcher, stub(checkout, "rel_shift")).is_alive()
    assert fake.calls == [None, True] and watcher.mode == "poll"
    assert "file-system events do not work here: OS file watch limit reached; polling every 0.3 s instead" \
        in capsys.readouterr().out


def test_watch_polls_by_itself_without_watchfiles(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # import watchfiles raises ImportError
    checkout = make_checkout(tmp_path)
    watcher = learner.Watcher(checkout, "rel_shift", None, follow=False, mode="events", max_runs=None)
    assert not waiting_for_a_change(watcher, stub(checkout, "rel_shift")).is_alive()
    assert watcher.mode == "stat" and "the watchfiles package is not installed" in capsys.readouterr().out


# -- grade hint ---------------------------------------------------------------------------------------------

def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.grading
def test_hints_come_one_at_a_time_in_order_and_the_last_repeats(tmp_path):
    checkout = make_checkout(tmp_path)
    hints = [h["text"] for h in tomllib.loads((ROOT / "problems/rel_shift/hints.toml").read_text())["hint"]]
    for n, text in enumerate(hints, 1):
        done = grade(checkout, "hint", "rel_shift")
        assert done.returncode == 0
        assert done.stdout.startswith(f"rel_shift: hint {n} of {len(hints)}\n")
        assert words(text) in words(done.stdout)
        assert not any(words(other) in words(done.stdout) for other in hints if other != text)
        assert state(checkout)["rel_shift"]["hints"] == n
    done = grade(checkout, "hint", "rel_shift")
    assert done.stdout.startswith(f"No more hints for rel_shift: you have seen all {len(hints)}.")
    assert words(hints[-1]) in words(done.stdout) and "--give-up" in done.stdout
    assert grade(checkout, "hint", "rel_shift", "--reset").returncode == 0
    assert grade(checkout, "hint", "rel_shift").stdout.startswith(f"rel_shift: hint 1 of {len(hints)}\n")


@pytest.mark.parametrize("slug", slugs(ROOT))
def test_every_problem_has_a_ladder_of_hints_without_code(slug):
    hints = learner.load_hints(problems.load(ROOT, slug))
    assert 3 <= len(hints) <= 5
    for text in hints:
        assert not re.search(r"\b(jnp|np|lax|nn|self)\.|\w\[|\[:|\w\(\w+[,=]|\w = \w+[.(]", text), \
            f"{slug}: a hint reads like code: {text}"


@pytest.mark.grading
def test_a_malformed_hints_file_is_one_sentence_naming_it(tmp_path):
    checkout = make_checkout(tmp_path)
    (checkout / "problems/rel_shift/hints.toml").write_text('[[hint]]\ntext = ""\n')
    done = grade(checkout, "hint", "rel_shift")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "grade: problems/rel_shift/hints.toml: hint[0] must have exactly one key, text, a non-empty string\n"


# -- grade reset --------------------------------------------------------------------------------------------

@pytest.mark.grading
def test_reset_refuses_without_an_untouched_copy_and_changes_nothing(tmp_path):
    checkout = make_checkout(tmp_path)
    target = stub(checkout, "rel_shift")
    target.write_text("my work\n")
    done = grade(checkout, "reset", "rel_shift")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "cannot reset rel_shift" in done.stderr and "nothing was changed" in done.stderr
    assert target.read_text() == "my work\n" and not list(target.parent.glob("*.bak-*"))


@pytest.mark.grading
def test_reset_restores_the_kept_stub_and_keeps_every_version_as_a_backup(tmp_path):
    checkout = make_checkout(tmp_path)
    target = stub(checkout, "rel_shift")
    pristine = target.read_text()
    (checkout / ".grade" / "pristine").mkdir(parents=True)
    (checkout / ".grade" / "pristine" / "rel_shift.py").write_text(pristine)
    done = grade(checkout, "reset", "rel_shift")
    assert done.returncode == 0 and "already the untouched stub" in done.stdout
    assert not list(target.parent.glob("*.bak-*"))
    for n, work in enumerate(["first try\n", "second try\n"], 1):
        target.write_text(work)
        done = grade(checkout, "reset", "rel_shift")
        assert done.returncode == 0
        assert f"your version is in problems/rel_shift/rel_shift.py.bak-{n}" in done.stdout
        assert target.read_text() == pristine
    assert (target.parent / "rel_shift.py.bak-1").read_text() == "first try\n"  # never overwritten
    assert (target.parent / "rel_shift.py.bak-2").read_text() == "second try\n"


@pytest.mark.grading
def test_reset_takes_the_newest_untouched_stub_from_git_skipping_work_in_progress(tmp_path):
    checkout = make_checkout(tmp_path)
    target = stub(checkout, "rel_shift")
    pristine = target.read_text()

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=learner", "-c", "user.email=learner@example.org", *args],
                       cwd=checkout, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "the katas")
    target.write_text(reference("rel_shift"))  # the learner's own commit of a solution
    git("commit", "-q", "-am", "my solution")
    target.write_text("broken\n")
    done = grade(checkout, "reset", "rel_shift")
    assert done.returncode == 0 and "(from git commit " in done.stdout
    assert target.read_text() == pristine
    assert (target.parent / "rel_shift.py.bak-1").read_text() == "broken\n"


# -- grade solution, next and list --------------------------------------------------------------------------

@pytest.mark.grading
def test_the_solution_is_refused_before_a_pass_and_shown_after_one(watched):
    checkout, _ = watched
    refused = grade(checkout, "solution", "t5_causal_relative_pos")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "has not passed yet" in refused.stderr and "--give-up" in refused.stderr
    shown = grade(checkout, "solution", "t5_relative_pos")
    assert shown.returncode == 0 and reference("t5_relative_pos") in shown.stdout


@pytest.mark.grading
def test_giving_up_shows_the_solution_and_is_recorded_and_listed(tmp_path):
    checkout = make_checkout(tmp_path)
    done = grade(checkout, "solution", "rel_shift", "--give-up")
    assert done.returncode == 0 and reference("rel_shift") in done.stdout
    assert state(checkout)["rel_shift"]["gave_up"] is True
    assert grade(checkout, "solution", "rel_shift").returncode == 0  # seen once, shown again
    listed = grade(checkout, "list").stdout.splitlines()
    assert [line for line in listed if line.startswith("rel_shift ")][0].endswith("not graded yet, gave up")
    assert listed[-1] == f"0 of {N} passed, 1 given up"


@pytest.mark.grading
def test_a_handout_says_the_solution_is_not_in_this_copy(tmp_path):
    checkout = make_checkout(tmp_path)
    shutil.rmtree(checkout / "solutions")
    (checkout / "HANDOUT.md").write_text("the katas\n")
    done = grade(checkout, "solution", "rel_shift", "--give-up")
    assert done.returncode == 2 and "not in this copy" in done.stderr and done.stdout == ""
    assert not (checkout / ".grade" / "state.json").exists()


@pytest.mark.grading
def test_a_hint_that_suggests_part_says_what_a_handout_does_instead(tmp_path):
    checkout = make_checkout(tmp_path)
    shutil.rmtree(checkout / "solutions")
    (checkout / "HANDOUT.md").write_text("the katas\n")
    (checkout / "problems" / "t5_attention" / "recorded.npz").write_bytes(b"")  # hints do not read it
    done = grade(checkout, "hint", "t5_attention")  # its first hint suggests --part
    assert done.returncode == 0 and "--part" in done.stdout
    assert " ".join(done.stdout.split()).count("In this handout, --part and the report's first wrong part are not "
                                                "available") == 1
    (checkout / "HANDOUT.md").unlink()  # the same hint in a full checkout (solutions aside) says nothing of it
    (checkout / "solutions").mkdir()
    assert "In this handout" not in grade(checkout, "hint", "t5_attention", "--reset").stdout


@pytest.mark.grading
def test_next_names_the_first_problem_not_passed(watched, tmp_path):
    checkout, _ = watched
    done = grade(checkout, "next")
    assert done.returncode == 0
    assert done.stdout.splitlines()[:3] == [
        f"Next: t5_causal_relative_pos: T5 causal relative position buckets ({len(BEFORE) + 1} of {N} passed)",
        "  statement: problems/t5_causal_relative_pos/README.md",
        "  your file: problems/t5_causal_relative_pos/t5_causal_relative_pos.py"]
    assert re.search(r"grade it: .* -m grader\.cli t5_causal_relative_pos ", done.stdout)
    fresh = make_checkout(tmp_path)
    assert grade(fresh, "next").stdout.startswith(f"Next: {SLUGS[0]}: ")
    (fresh / ".grade").mkdir()
    (fresh / ".grade" / "state.json").write_text(json.dumps({slug: {"status": "pass"} for slug in slugs(ROOT)}))
    assert grade(fresh, "next").stdout == f"Every problem passes ({N} of {N} passed). Well done.\n"


@pytest.mark.grading
def test_list_shows_progress(watched):
    checkout, _ = watched
    listed = grade(checkout, "list").stdout.splitlines()
    assert [line.split()[0] for line in listed[:-1]] == slugs(ROOT)
    assert listed[-1] == f"{len(BEFORE) + 1} of {N} passed"
    assert re.search(r"^t5_relative_pos .* pass$", listed[len(BEFORE)])


# -- did you mean, colour ------------------------------------------------------------------------------------

@pytest.mark.grading
@pytest.mark.parametrize("command", [[], ["watch"], ["hint"], ["reset"], ["solution"]])
def test_a_misspelt_problem_gets_a_suggestion(tmp_path, command):
    checkout = make_checkout(tmp_path)
    done = grade(checkout, *command, "t5_relativ_pos")
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("grade: no problem named 't5_relativ_pos'; did you mean t5_relative_pos? ")
    far = grade(checkout, *command, "zzz_unknown")
    assert far.returncode == 2 and "did you mean" not in far.stderr and f"the problems are: {SLUGS[0]}" in far.stderr


def on_a_terminal(checkout: Path, *argv: str, env: dict) -> str:
    """What ``grade <argv>`` writes with its stdout a terminal."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([str(PYTHON), "-m", "grader.cli", *argv], cwd=checkout, env=env,
                               stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the command has ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


@pytest.mark.grading
def test_colour_on_a_terminal_or_forced_none_when_piped_or_no_color(watched):
    checkout, _ = watched
    green, yellow = "\x1b[32mpass\x1b[0m", "\x1b[33mnot_started\x1b[0m"
    terminal = on_a_terminal(checkout, "list", env=environment(TERM="xterm"))
    assert green in terminal and yellow in terminal
    assert ESCAPE not in on_a_terminal(checkout, "list", env=environment(TERM="xterm", NO_COLOR="1"))
    forced = grade(checkout, "list", env=environment(FORCE_COLOR="1")).stdout
    assert green in forced and yellow in forced
    assert ESCAPE not in grade(checkout, "list").stdout  # piped
    assert ESCAPE not in grade(checkout, "list", env=environment(FORCE_COLOR="1", NO_COLOR="1")).stdout
    done = grade(checkout, "t5_relative_pos", "--json", env=environment(FORCE_COLOR="1"))
    assert json.loads(done.stdout)["status"] == "pass" and ESCAPE not in done.stdout


# -- --format exercism --------------------------------------------------------------------------------------

@pytest.mark.grading
def test_format_exercism_writes_results_json(tmp_path):
    checkout = make_checkout(tmp_path / "checkout")
    done = grade(checkout, "rel_shift", "--format", "exercism", "--output", str(tmp_path / "out" / "results.json"))
    assert done.returncode == 2 and "no folder" in done.stderr and not (tmp_path / "out").exists()  # not made
    (tmp_path / "out").mkdir()
    done = grade(checkout, "rel_shift", "--format", "exercism", "--output", str(tmp_path / "out"))  # a folder there
    assert done.returncode == 2 and "rel_shift: NOT STARTED" in done.stdout and "could not write" in done.stderr
    assert "Traceback" not in done.stderr
    done = grade(checkout, "rel_shift", "--format", "exercism", "--output", str(tmp_path / "out" / "results.json"))
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert done.returncode == 1 and "rel_shift: NOT STARTED" in done.stdout
    assert results["version"] == 3 and results["status"] == "error" and "NotImplementedError" in results["message"]
    done = grade(checkout, "rel_shfit", "--format", "exercism")  # a usage error: results.json here says so
    assert done.returncode == 2
    assert json.loads((checkout / "results.json").read_text())["status"] == "error"
    for conflicting in (["--json", "--format", "text"], ["--output", "r.json"]):
        done = grade(checkout, "rel_shift", *conflicting)
        assert done.returncode == 2 and ("do not go together" in done.stderr or "goes with" in done.stderr)


@pytest.mark.grading
def test_a_reset_problem_counts_as_not_passed_until_it_passes_again(tmp_path):
    checkout = make_checkout(tmp_path)
    target = stub(checkout, "rel_shift")
    (checkout / ".grade" / "pristine").mkdir(parents=True)
    (checkout / ".grade" / "pristine" / "rel_shift.py").write_text(target.read_text())
    target.write_text(reference("rel_shift"))
    assert grade(checkout, "rel_shift").returncode == 0
    assert f"1 of {N} passed" in grade(checkout, "list").stdout
    assert grade(checkout, "reset", "rel_shift").returncode == 0
    listed = grade(checkout, "list").stdout
    assert f"0 of {N} passed" in listed and state(checkout)["rel_shift"]["passed"] is False


def test_grade_with_no_problem_says_how_to_find_one(capsys):
    from grader import cli

    assert cli.main([]) == 2
    said = capsys.readouterr().err
    assert "grade next" in said and "grade list" in said and "Traceback" not in said
