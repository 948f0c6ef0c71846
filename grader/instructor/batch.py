"""``grade batch``: grade a whole class's submissions to one problem, in parallel, into a gradebook.

    grade batch <problem> SUBMISSIONS... [--jobs N] [--out DIR] [--force] [--quiet]

SUBMISSIONS are files and folders. A folder holds one entry per student: a sub-folder ``<student>/``
with the student's ``<problem>.py`` in it, or a file ``<student>.py``. Entries whose names start with
``.`` or ``_`` are skipped, and so are other files (named on stderr). A file given on the command line
is named by its stem, except ``<problem>.py``, which is named by its folder (``alice/rel_shift.py`` is
alice's). A sub-folder without ``<problem>.py`` is a row of its own, with status ``error``; two
submissions with one name, or a folder that holds ``<problem>.py`` itself (is it one student's folder,
or a class with a student named after the problem?), are refused before anything runs.

Each submission is graded exactly as ``grade <problem> --file F --json`` grades it, in a process of its
own (its confinement, limits and verdict), ``--jobs`` at a time; the command's own time limit decides a
hang, and the batch kills the command's whole process group only as a last resort, when it runs past
that limit by a quarter and 30 s more. Before the class, the reference is graded once alone: the
zygote that run leaves (see :mod:`grader.sandbox.zygote`) has imported JAX before the first of the parallel
grades looks for it, so they fork their workers from it instead of each importing JAX at once.

The gradebook (``DIR/gradebook.csv``, one row per submission, sorted by student) is rewritten as each
grade ends, so an interrupted batch keeps the rows done so far; ``DIR/verdicts/<student>.json`` holds the
JSON verdict as the command printed it (or, where the command printed none, an object of the same
schema that says why). An existing gradebook is never replaced unless ``--force`` is given. When the batch
ends (interrupted too), ``DIR/summary.json`` and ``DIR/class.html`` say which mistakes the class made, most
frequent first (:mod:`grader.instructor.class_report`).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path

from grader.commands.graded import Graded, grade, grade_argv, run_command
from grader.core import exits
from grader.core.cut import cut
from grader.core.exits import Exit
from grader.core.verdict_report import Report
from grader.core.verdict import Status
from grader.problem import problems
from grader.problem import checkout
from grader.core.submission import Refused, hidden_with, private_copy, shown

COLUMNS = ("student", "file", "status", "score", "pitfall", "message", "duration_s")
CLASS_FILES = ("summary.json", "class.html")  # beside the gradebook: the class's mistakes (class_report)
MESSAGE_CAP = 500  # characters of a verdict's message in the gradebook (the verdict file has it all)
GRACE_SECONDS = 30.0  # past the command's own time limit, before the batch kills it


class Interrupted(Exception):
    """Ctrl-C, or a signal that ends the batch: stop, keep the rows done so far."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass(frozen=True)
class Submission:
    """One student's submission: the module to grade, the folder it was found in (no link may lie between
    them), or ``missing``: why there is none."""

    student: str
    file: Path
    within: Path
    missing: str | None = None


@dataclass(frozen=True)
class Row:
    """One line of the gradebook."""

    student: str
    file: str
    status: str
    score: int
    pitfall: str
    message: str
    duration_s: float


# -- the submissions -------------------------------------------------------------------------------------


def collect(slug: str, paths: list[Path], out: Path) -> tuple[list[Submission], list[Path]]:
    """The submissions ``paths`` name, sorted by student, and the entries of folders that were skipped;
    a UsageError for what cannot be graded unambiguously."""
    found: dict[str, Submission] = {}
    skipped: list[Path] = []
    for path in paths:
        if path.is_dir():
            entries = folder_entries(slug, path, out, skipped)
        elif path.is_file():
            if path.suffix != ".py":
                raise problems.UsageError(f"{path} is not a Python file (.py) or a folder of submissions")
            folder = Path(os.path.abspath(path)).parent
            entries = [Submission(shown(folder.name if path.name == f"{slug}.py" else path.stem), path, folder)]
        else:
            raise problems.UsageError(f"no file or folder at {path}")
        for entry in entries:
            if entry.student in found:
                raise problems.UsageError(f"two submissions for the student {entry.student!r}: "
                                          f"{found[entry.student].file} and {entry.file}; rename one")
            found[entry.student] = entry
    if not found:
        raise problems.UsageError(f"no submissions in {', '.join(map(str, paths))} (a folder holds <student>.py "
                                  f"files or <student>/ folders with {slug}.py in them)")
    return [found[name] for name in sorted(found)], skipped


def folder_entries(slug: str, folder: Path, out: Path, skipped: list[Path]) -> list[Submission]:
    """A class folder's submissions: ``<student>/<slug>.py`` and ``<student>.py``."""
    if (folder / f"{slug}.py").exists():
        raise problems.UsageError(
            f"{folder} holds {slug}.py itself: pass that file for one student's submission, or the folder "
            f"above it for a class (a student's file named {slug}.py goes in a folder named after them)")
    entries = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith((".", "_")) or same_path(entry, out):
            continue
        student = shown(entry.stem if entry.suffix == ".py" else entry.name)
        if entry.is_symlink():  # a row that says so: a link is never followed with the grader's rights
            entries.append(Submission(student, entry, folder, f"{shown(entry)} is a symbolic link: submit the "
                                                              f"file itself, not a link to one"))
        elif entry.is_dir():
            module = entry / f"{slug}.py"
            entries.append(Submission(student, module, folder) if module.is_file() or module.is_symlink()
                           else Submission(student, entry, folder, f"no {slug}.py in {shown(entry)}"))
        elif entry.suffix == ".py" and entry.is_file():
            entries.append(Submission(student, entry, folder))
        else:
            skipped.append(entry)
    return entries


def same_path(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a loop of links, before Python 3.13
        return False


# -- one grade -------------------------------------------------------------------------------------------


def grade_command(slug: str, file: Path, args: argparse.Namespace) -> list[str]:
    """The command line that grades one file, with the batch's options passed through."""
    options = []
    for flag, value in (("--time-limit", args.time_limit), ("--call-time-limit", args.call_time_limit),
                        ("--memory-mib", args.memory_mib)):
        if value is not None:
            options += [flag, str(value)]
    return grade_argv(slug, file.resolve(), *options, *(["--no-jit"] if args.no_jit else []))


def outcome(slug: str, sub: Submission, graded: Graded | None, limit: float,
            copy: Path | None = None) -> tuple[Row, Report]:
    """The gradebook's row and the verdict for a submission (``graded`` None: not graded), which
    name the student's file where the verdict names the private ``copy`` it was graded from."""
    if graded is None:
        return verdict_row(sub, Report.not_graded(slug, Status.ERROR, sub.missing or "not graded"), 0.0)
    done = graded.done
    if graded.verdict is not None:
        verdict = graded.verdict
        if copy is not None:
            old, new = str(copy.resolve()), shown(sub.file)
            verdict = verdict.map_text(lambda text: text.replace(old, new))
        return verdict_row(sub, verdict, done.seconds)
    if done.timed_out:
        why = Report.not_graded(slug, Status.TIMEOUT, f"grading did not end within {limit:.0f} s, so the batch stopped it")
    else:
        why = Report.not_graded(slug, Status.ERROR, graded.why_not())
    return verdict_row(sub, why, done.seconds)


def verdict_row(sub: Submission, verdict: Report, seconds: float) -> tuple[Row, Report]:
    row = Row(sub.student, shown(sub.file), verdict.status.value, int(verdict.passed),
              verdict.pitfall.id if verdict.pitfall else "", one_line(verdict.message, MESSAGE_CAP), round(seconds, 2))
    return row, verdict


def one_line(text: str, cap: int) -> str:
    """``text`` on one line, control characters escaped, at most ``cap`` characters."""
    text = " ".join(text.split())
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return cut(text, cap)


# -- the gradebook ---------------------------------------------------------------------------------------


class Gradebook:
    """``DIR/gradebook.csv`` and ``DIR/verdicts/``, rewritten as rows come in; ``DIR/summary.json`` and
    ``DIR/class.html`` (:mod:`grader.instructor.class_report`) once the batch ends."""

    def __init__(self, folder: Path, order: list[str]):
        self.folder, self.order = folder, order
        self.rows: dict[str, Row] = {}
        self.verdicts: dict[str, Report] = {}

    @property
    def path(self) -> Path:
        return self.folder / "gradebook.csv"

    def claim(self, force: bool) -> None:
        """Refuse a folder that holds an earlier batch's gradebook or verdicts, unless ``force`` (then its
        verdict files go, so that the folder holds this batch's alone); make the folder."""
        verdicts = self.folder / "verdicts"
        earlier = sorted(verdicts.glob("*.json")) if verdicts.is_dir() else []
        if (self.path.exists() or earlier) and not force:
            raise problems.UsageError(f"{self.path if self.path.exists() else verdicts} already exists: pass "
                                      f"--force to replace that batch's gradebook and verdicts, or --out for another folder")
        if self.folder.exists() and not self.folder.is_dir():
            raise problems.UsageError(f"{self.folder} is a file, not a folder for the gradebook")
        for path in earlier + [self.folder / name for name in CLASS_FILES]:
            path.unlink(missing_ok=True)
        verdicts.mkdir(parents=True, exist_ok=True)

    def add(self, row: Row, verdict: Report) -> None:
        from grader.core.files import write_text

        write_text(self.folder / "verdicts" / f"{row.student}.json", verdict.to_json() + "\n")
        self.rows[row.student] = row
        self.verdicts[row.student] = verdict
        self.write()

    def write(self) -> None:
        from grader.core.files import write_text

        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow(COLUMNS)
        for name in self.order:
            if name in self.rows:
                row = self.rows[name]
                writer.writerow([cell(row.student), cell(row.file), row.status, row.score, row.pitfall,
                                 cell(row.message), f"{row.duration_s:.2f}"])
        write_text(self.path, text.getvalue())

    def write_class(self, problem: str, drawn: bool = True) -> Path:
        """The class's summary of the rows so far, beside the gradebook (its picture where ``drawn``); the
        page's path."""
        from grader.instructor import class_report

        graded = [class_report.Graded(name, self.verdicts[name], self.rows[name].duration_s)
                  for name in self.order if name in self.rows]
        return class_report.write(self.folder, [class_report.summarize(problem, graded)], drawn)[1]


def cell(text: str) -> str:
    """A text cell that a spreadsheet shows as text, never evaluates as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


# -- progress --------------------------------------------------------------------------------------------


class Progress:
    """On a terminal, one line on stderr rewritten in place: a bar, done/total, counts and the time; else
    one plain line per finished submission; nothing when quiet."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.quiet = total, quiet
        self.tty = not quiet and sys.stderr.isatty()
        self.started = time.monotonic()
        self.counts: Counter[str] = Counter()

    def counted(self) -> str:
        shown = {"pass": self.counts["pass"], "fail": self.counts["fail"]}
        shown.update((k, v) for k, v in sorted(self.counts.items()) if k not in shown)
        return ", ".join(f"{v} {k}" for k, v in shown.items())

    def elapsed(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"{seconds // 60}m{seconds % 60:02d}s"

    def done(self, row: Row) -> None:
        self.counts[row.status] += 1
        if self.tty:
            self.draw()
        elif not self.quiet:
            print(f"grade batch: {sum(self.counts.values())}/{self.total} {one_line(row.student, 60)}: {row.status} "
                  f"({row.duration_s:.1f} s); {self.counted()}; {self.elapsed()} elapsed", file=sys.stderr, flush=True)

    def tick(self) -> None:
        if self.tty:
            self.draw()

    def draw(self) -> None:
        done = sum(self.counts.values())
        width = 20
        filled = width * done // max(self.total, 1)
        line = f"[{'#' * filled}{'-' * (width - filled)}] {done}/{self.total}  {self.counted()}  {self.elapsed()}"
        columns = shutil.get_terminal_size().columns
        sys.stderr.write("\r\x1b[K" + line[:max(columns - 1, 10)])
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty:
            self.draw()
            sys.stderr.write("\n")
            sys.stderr.flush()


# -- the batch -------------------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="grade batch", description="Grade a whole class's submissions to one problem, "
                                     "in parallel, into DIR/gradebook.csv and DIR/verdicts/<student>.json; "
                                     "the class's mistakes, most frequent first, into DIR/summary.json and "
                                     "DIR/class.html.",
                                     epilog="Rows: student, file, status, score (1 for a pass, else 0), pitfall (the "
                                            "known mistake named), message, duration_s.")
    parser.add_argument("problem", help="the problem's name, e.g. rel_shift")
    parser.add_argument("submissions", nargs="+", type=Path, metavar="SUBMISSION",
                        help="a student's .py file, or a folder of <student>.py files and <student>/ folders")
    parser.add_argument("--jobs", type=int, default=cores(), metavar="N",
                        help=f"submissions graded at once (default: the number of cores, {cores()})")
    parser.add_argument("--out", type=Path, metavar="DIR", help="where the gradebook goes (default: grades-<problem>)")
    parser.add_argument("--force", action="store_true", help="replace the gradebook and verdicts already in DIR")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--call-time-limit", type=float, metavar="S", help="passed to grade: seconds for one call")
    parser.add_argument("--time-limit", type=float, metavar="S", help="passed to grade: seconds for a whole grade")
    parser.add_argument("--memory-mib", type=int, metavar="N", help="passed to grade: memory limit for the code")
    parser.add_argument("--no-jit", action="store_true", help="passed to grade: call the code eagerly")
    return parser.parse_args(argv)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def usage_error(message: str) -> int:
    return exits.usage_error(message, program="grade batch")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    out = args.out or Path(f"grades-{args.problem}")
    try:
        if args.jobs < 1:
            raise problems.UsageError(f"--jobs must be at least 1, got {args.jobs}")
        for flag, value in (("--time-limit", args.time_limit), ("--call-time-limit", args.call_time_limit),
                            ("--memory-mib", args.memory_mib)):
            if value is not None and not value > 0:
                raise problems.UsageError(f"{flag} must be positive, got {value}")
        problem = problems.load(checkout.find_root(), args.problem)
        subs, skipped = collect(problem.slug, args.submissions, out)
        book = Gradebook(out, [s.student for s in subs])
        book.claim(args.force)
    except (problems.UsageError, problems.ProblemError, OSError) as exc:
        return usage_error(str(exc))
    if skipped and not args.quiet:
        print(f"grade batch: skipped {len(skipped)} entries that are neither .py files nor folders: "
              f"{', '.join(one_line(p.name, 80) for p in skipped)}", file=sys.stderr)
    limit = (args.time_limit or problem.problem_seconds) * 1.25 + GRACE_SECONDS
    return run_batch(problem, subs, args, book, limit)


def run_batch(problem: problems.Problem, subs: list[Submission], args: argparse.Namespace, book: Gradebook,
              limit: float) -> int:
    """Grade ``subs`` into ``book``; Exit.OK, or Exit.INTERRUPTED (the rows done so far written)."""
    slug = problem.slug
    stop = threading.Event()
    progress = Progress(len(subs), args.quiet)
    graded = [s for s in subs if s.missing is None]
    jobs = max(1, min(args.jobs, len(graded)))
    if jobs > 1 and shared_learner_user():
        jobs = 1
        if not args.quiet:
            print("grade batch: learner code runs unconfined here, as one user shared by every submission (see "
                  "GRADE_LEARNER_USER): one submission at a time, so that none can reach another's processes",
                  file=sys.stderr)
    if not args.quiet:
        print(f"grade batch: {slug}, {len(subs)} submissions, {jobs} at a time; gradebook: {book.path}",
              file=sys.stderr, flush=True)
    previous = signals_as_interrupts()
    pool = ThreadPoolExecutor(max_workers=jobs)
    # Each submission is graded from a copy in a folder of its own; what learner code could learn from or
    # tamper with (the class's folders, the gradebook) is hidden from it.
    copies = Path(tempfile.mkdtemp(prefix="grade-batch-"))  # the grader's alone (see private_copy)
    env = grading_env(problem, subs, book)
    try:
        progress.tick()
        if jobs > 1 and len(graded) > 1:
            code = prime(problem, args, limit, stop)
            if code is not None:
                return code
        running: dict[Future, tuple[Submission, Path]] = {}
        for i, sub in enumerate(subs):
            copy = None
            if sub.missing is None:
                try:
                    copy = private_copy(sub.file, sub.within, copies / str(i), f"{slug}.py")
                except Refused as exc:
                    sub = replace(sub, missing=str(exc))
            if sub.missing is not None:
                write_row(book, progress, *outcome(slug, sub, None, limit))
            else:
                running[pool.submit(grade, grade_command(slug, copy, args), limit, stop, env, problem.root)] = sub, copy
        while running:
            finished, _ = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in finished:
                sub, copy = running.pop(future)
                write_row(book, progress, *outcome(slug, sub, future.result(), limit, copy))
            progress.tick()
    except (KeyboardInterrupt, Interrupted) as exc:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        book.write()
        book.write_class(slug, drawn=False)  # Ctrl-C asks for a prompt end: the rows done, no picture
        progress.close()
        print(f"grade batch: interrupted; {len(book.rows)} of {len(subs)} submissions graded, in {book.path}",
              file=sys.stderr)
        return 128 + exc.signum if isinstance(exc, Interrupted) else Exit.INTERRUPTED
    finally:
        stop.set()  # (nothing is running here unless something went wrong: then the grades stop too)
        pool.shutdown(wait=True, cancel_futures=True)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        shutil.rmtree(copies, ignore_errors=True)
    book.write()
    page = book.write_class(slug)
    progress.close()
    counts = Counter(row.status for row in book.rows.values())
    print(f"{slug}: {len(book.rows)} submissions graded in {progress.elapsed()}: "
          + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + f"; gradebook: {book.path}; "
          f"the class's mistakes: {page}")
    return Exit.OK


def shared_learner_user() -> bool:
    """Whether this batch's learner code will run unconfined as a user all workers share: the grader is root,
    the kernel refuses namespaces, and there are no ids for a user of each worker's own."""
    from grader.sandbox import monitor, users
    from grader.sandbox.config import worker_env

    return os.geteuid() == 0 and not users.own_learner_ids() and monitor.why_not_confined(worker_env()) is not None


def signals_as_interrupts() -> dict:
    """A signal that would end the batch ends it as Ctrl-C does (one ignored, as under nohup, stays ignored);
    the handlers before, to put back."""
    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGHUP)
                if signal.getsignal(s) is not signal.SIG_IGN}
    if signal.getsignal(signal.SIGINT) is not None:  # Ctrl-C's handler, ignored during the clean-up
        previous[signal.SIGINT] = signal.getsignal(signal.SIGINT)
    return previous


def grading_env(problem: problems.Problem, subs: list[Submission], book: Gradebook) -> dict:
    """The environment each submission's `grade` runs in: the class's folders and the gradebook hidden,
    and (outside a handout) the instructor's own inputs drawn too."""
    env = hidden_with(dict(os.environ), class_folders(subs, problem.root) + [book.folder])
    if not problem.handout:  # the class is graded on inputs no handout recorded, too
        checkout.ensure_secret(problem.root)
        env[checkout.SECRET_VARIABLE] = "1"
    return env


def class_folders(subs: list[Submission], root: Path) -> list[Path]:
    """The folders the submissions were found in, to hide from learner code: every one but the checkout and
    the folders above it (the grader and the problems must stay visible)."""
    above = {Path(os.path.abspath(root)), *Path(os.path.abspath(root)).parents}
    return sorted({Path(os.path.abspath(s.within)) for s in subs} - above)


def interrupt(signum, frame) -> None:
    raise Interrupted(signum)


def write_row(book: Gradebook, progress: Progress, row: Row, verdict: Report) -> None:
    book.add(row, verdict)
    progress.done(row)


def prime(problem: problems.Problem, args: argparse.Namespace, limit: float, stop: threading.Event) -> int | None:
    """Grade the reference once, alone (in a handout, which has none, the stub), so that the parallel
    grades find a zygote that has imported JAX (and the reference's outputs cached); Exit.USAGE, with the
    command's sentence, where the problem is broken. A verdict other than a pass changes nothing: the
    class's grades say what they say."""
    first = problem.stub if problem.handout else problem.reference
    done = run_command(grade_command(problem.slug, first, args), limit, stop, cwd=problem.root)
    if done.returncode == Exit.USAGE:
        return usage_error(f"{problem.slug} cannot be graded: {done.last_said or 'grade exited with status 2'}")
    return None
