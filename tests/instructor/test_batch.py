"""`grade batch`: a class graded in parallel into a gradebook, through the command line; every verdict
right, the files right, nothing left running, Ctrl-C keeps what is done."""

import csv
import json
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, left_behind, live_processes
from grader.core.verdict_report import SCHEMA
from grader.commands import graded as run
from grader.instructor import batch, class_report

import classroom  # noqa: E402  (tests/classroom.py)

FAST = ("--call-time-limit", "4")  # a hanging call costs 4 s of its slot, not the problem's 20


def start_batch(*argv, **kwargs) -> subprocess.Popen:
    """`grade batch ...` in a session of its own (as a terminal starts a command), from the checkout."""
    return subprocess.Popen([sys.executable, "-m", "grader.cli", "batch", *map(str, argv)], cwd=ROOT,
                            start_new_session=True, **kwargs)


def run_batch(*argv, timeout: float = 120) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, the batch's session id)."""
    proc = start_batch(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err, proc.pid


def in_session(sid: int) -> list[int]:
    """Live processes of the session ``sid`` (what a batch started in its own session left)."""
    found = []
    for pid in live_processes():
        try:
            if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3]) == sid:
                found.append(pid)
        except (OSError, IndexError, ValueError):
            continue
    return found


def gradebook(out: Path) -> list[dict]:
    with open(out / "gradebook.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == batch.COLUMNS
        return list(reader)


def test_a_mixed_class_gets_every_verdict_right(tmp_path, private_cache):
    kinds = ["reference", "alt_numpy_float64", "wrong_pad_wrong_side", "wrong_transposed", "hangs",
             "raises_at_import", "exits_in_call", "os_exit_in_call", "floods_stdout", "no_file"]
    expected = classroom.write_class(tmp_path / "class", kinds)
    (tmp_path / "class" / "README.txt").write_text("not a submission\n")
    before = live_processes()
    out = tmp_path / "grades"
    code, stdout, stderr, sid = run_batch("rel_shift", tmp_path / "class", "--out", out, "--jobs", 2, *FAST)
    assert code == 0, stderr

    rows = gradebook(out)
    assert [r["student"] for r in rows] == sorted(expected)  # one row each, by student
    for row in rows:
        want = expected[row["student"]]
        assert (row["status"], row["pitfall"]) == (want.status, want.pitfall), row
        assert row["score"] == ("1" if want.status == "pass" else "0")
        assert float(row["duration_s"]) >= 0
        verdict_text = (out / "verdicts" / f"{row['student']}.json").read_text()
        assert len(verdict_text) < 1 << 20
        verdict = json.loads(verdict_text)
        jsonschema.validate(verdict, SCHEMA)
        assert verdict["status"] == row["status"] and verdict["problem"] == "rel_shift"
        assert (verdict["pitfall"] or {}).get("id", "") == row["pitfall"]
    by_name = {r["student"]: r for r in rows}
    assert by_name["s01_reference"]["file"].endswith(os.path.join("s01_reference", "rel_shift.py"))
    assert "no rel_shift.py" in by_name["s10_no_file"]["message"]
    # A message names the student's file, never the private copy it was graded from.
    [raised] = [r for r in rows if r["student"].endswith("raises_at_import")]
    assert raised["file"] in raised["message"], raised["message"]
    assert not any("grade-batch-" in (out / "verdicts" / f"{r['student']}.json").read_text() + r["message"] for r in rows)
    assert "within 4 s" in by_name["s05_hangs"]["message"]  # grade's own call limit, not the batch's
    flooded = json.loads((out / "verdicts" / "s09_floods_stdout.json").read_text())["output"]
    assert "left out" in flooded and len(flooded) < 20_000
    assert "README.txt" in stderr  # a skipped entry is named

    # Beside the gradebook, the class's mistakes: the same rows, summed up.
    summary = json.loads((out / "summary.json").read_text())
    jsonschema.validate(summary, class_report.SCHEMA)
    [problem] = summary["problems"]
    by_status = counted(rows, "status")
    assert (problem["problem"], problem["submissions"], problem["passed"]) == ("rel_shift", 10, len(by_status["pass"]))
    assert {g["id"]: g["students"] for g in problem["statuses"]} == by_status
    assert {g["id"]: g["students"] for g in problem["mistakes"]} == counted([r for r in rows if r["pitfall"]],
                                                                            "pitfall")
    assert problem["seconds"]["total"] == pytest.approx(sum(float(r["duration_s"]) for r in rows), abs=0.06)
    page = (out / "class.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and all(g["id"] in page for g in problem["mistakes"])
    assert f"the class's mistakes: {out / 'class.html'}" in stdout

    progress = [line for line in stderr.splitlines() if line.startswith("grade batch: ") and "/10 " in line]
    assert len(progress) == 10 and progress[-1].startswith("grade batch: 10/10 ")
    counts = Counter(want.status for want in expected.values())
    assert all(f"{n} {status}" in stdout for status, n in counts.items()) and len(counts) == 4
    assert in_session(sid) == []
    assert left_behind(before, private_cache) == set()


def counted(rows: list[dict], column: str) -> dict[str, list[str]]:
    """The gradebook's students by the value of ``column``."""
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row[column], []).append(row["student"])
    return found


@pytest.mark.xfail(strict=False, reason="under the whole suite in a fresh clone (three CI runs of 2026-11-29), the "
                   "interrupted batch printed nothing for 30 s; alone, under six busy processes and in the "
                   "checkout's own whole-suite run it ends in about a second: cause not found yet")
def test_ctrl_c_kills_the_running_grades_and_keeps_the_rows_done(tmp_path, private_cache):
    expected = classroom.write_class(tmp_path / "class", ["reference", "hangs", "hangs", "no_file"])
    out = tmp_path / "grades"
    before = live_processes()
    proc = start_batch("rel_shift", tmp_path / "class", "--out", out, "--jobs", 2, "--call-time-limit", 60,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    said = b""
    deadline = time.monotonic() + 90
    while b"s01_reference: pass" not in said and time.monotonic() < deadline:
        if select.select([proc.stderr], [], [], 1.0)[0]:
            said += os.read(proc.stderr.fileno(), 65536)
    assert b"s01_reference: pass" in said, said
    time.sleep(0.5)  # the hanging ones are running now
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the terminal signals the foreground group
    started = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and time.monotonic() - started < 15
    assert b"interrupted" in err
    rows = {r["student"]: r["status"] for r in gradebook(out)}
    assert rows == {"s01_reference": "pass", "s04_no_file": "error"}
    [problem] = json.loads((out / "summary.json").read_text())["problems"]  # the rows done, summed up
    assert {g["id"]: g["students"] for g in problem["statuses"]} == {"pass": ["s01_reference"],
                                                                     "error": ["s04_no_file"]}
    assert sorted(p.stem for p in (out / "verdicts").glob("*.json")) == sorted(rows)
    page = (out / "class.html").read_text()
    assert "interrupted" in page and "<img" not in page  # a prompt end: the rows done, no picture drawn
    assert set(expected) > set(rows)
    assert in_session(proc.pid) == []
    assert left_behind(before, private_cache) == set()


def test_an_existing_gradebook_is_kept_unless_forced(tmp_path):
    classroom.write_class(tmp_path / "first", ["no_file", "no_file"])
    out = tmp_path / "grades"
    code, stdout, _, _ = run_batch("rel_shift", tmp_path / "first", "--out", out, "--quiet")
    assert code == 0 and "2 error" in stdout
    kept = (out / "gradebook.csv").read_bytes()
    assert sorted(p.name for p in (out / "verdicts").iterdir()) == ["s01_no_file.json", "s02_no_file.json"]

    (tmp_path / "second" / "zoe").mkdir(parents=True)
    code, stdout, stderr, _ = run_batch("rel_shift", tmp_path / "second", "--out", out)
    assert code == 2 and stdout == "" and len(stderr.strip().splitlines()) == 1 and "--force" in stderr
    assert (out / "gradebook.csv").read_bytes() == kept

    code, _, _, _ = run_batch("rel_shift", tmp_path / "second", "--out", out, "--force", "--quiet")
    assert code == 0
    assert [r["student"] for r in gradebook(out)] == ["zoe"]
    assert [p.name for p in (out / "verdicts").iterdir()] == ["zoe.json"]  # the earlier batch's are gone
    [problem] = json.loads((out / "summary.json").read_text())["problems"]
    assert [g["students"] for g in problem["statuses"]] == [["zoe"]]


def test_progress_on_a_terminal_is_one_line_redrawn(tmp_path):
    classroom.write_class(tmp_path / "class", ["no_file", "no_file", "no_file"])
    leader, follower = pty.openpty()
    proc = start_batch("rel_shift", tmp_path / "class", "--out", tmp_path / "grades",
                       stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    proc.communicate(timeout=60)
    shown = b""
    while select.select([leader], [], [], 0.5)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: all read
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.returncode == 0
    assert b"\r\x1b[K[" in shown and b"3/3" in shown and b"3 error" in shown
    assert b"grade batch: 3/3" not in shown  # not the plain lines


def usage_cases(tmp_path: Path) -> dict[str, list]:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "alice.py").write_text("")
    (tmp_path / "b" / "alice.py").write_text("")
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "rel_shift.py").write_text("")
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("")
    return {
        "unknown problem": ["rel_shiftx", tmp_path / "a"],
        "no such path": ["rel_shift", tmp_path / "nowhere"],
        "two alices": ["rel_shift", tmp_path / "a", tmp_path / "b"],
        "a student's folder given as a class": ["rel_shift", tmp_path / "one"],
        "not a .py file": ["rel_shift", tmp_path / "notes.txt"],
        "no submissions": ["rel_shift", tmp_path / "empty"],
        "no jobs": ["rel_shift", tmp_path / "a", "--jobs", 0],
    }


@pytest.mark.parametrize("case", ["unknown problem", "no such path", "two alices", "a student's folder given as a class",
                                  "not a .py file", "no submissions", "no jobs"])
def test_usage_errors_are_one_sentence_and_exit_2(tmp_path, case):
    argv = usage_cases(tmp_path)[case]
    code, stdout, stderr, _ = run_batch(*argv, "--out", tmp_path / "grades")
    assert code == 2 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("grade batch: ")
    assert not (tmp_path / "grades").exists()


def test_the_last_resort_kills_the_whole_group_and_bounds_what_it_reads(tmp_path):
    """A command that runs past the batch's limit is killed with everything in its process group; one
    that prints without end costs bounded memory."""
    marker = tmp_path / "grandchild"
    script = tmp_path / "stuck.py"
    script.write_text(f"""import os, subprocess, sys, time
grandchild = "import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
subprocess.Popen([sys.executable, "-c", grandchild])
sys.stdout.write("x" * (8 << 20))
sys.stdout.flush()
time.sleep(600)
""")
    started = time.monotonic()
    graded = run.grade([sys.executable, str(script)], 3.0, threading.Event())
    done = graded.done
    assert done.timed_out and done.returncode is None and time.monotonic() - started < 10
    assert done.overflow and len(done.stdout) == run.VERDICT_CAP and graded.verdict is None
    grandchild = int(marker.read_text())
    deadline = time.monotonic() + 5
    while grandchild in live_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert grandchild not in live_processes()
    row, verdict = batch.outcome("rel_shift", batch.Submission("ann", tmp_path / "ann.py", tmp_path), graded, 3.0)
    assert (row.status, row.score) == ("timeout", 0) and "within 3 s" in row.message
    jsonschema.validate(json.loads(verdict.to_json()), SCHEMA)  # what the verdict file holds


def test_a_command_without_a_verdict_is_an_error_row_with_its_last_words(tmp_path):
    graded = run.grade([sys.executable, "-c", "import sys; print('not json'); sys.exit('grade broke: reason')"],
                       30.0, threading.Event())
    assert graded.done.returncode == 1 and not graded.done.timed_out and not graded.graded
    row, verdict = batch.outcome("rel_shift", batch.Submission("ann", tmp_path / "ann.py", tmp_path), graded, 30.0)
    assert (row.status, row.score) == ("error", 0) and "grade broke: reason" in row.message
    jsonschema.validate(json.loads(verdict.to_json()), SCHEMA)  # what the verdict file holds
