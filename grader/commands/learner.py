"""The learner's commands around `grade <problem>`: watch, hint, reset, solution and next; the progress they
share with `grade list` (``.grade/state.json``); and the "did you mean" for a misspelt problem name.

The state file maps each problem to what this checkout knows of it: the status of its last grading and the
sha256 of the file graded then (``status``, ``sha256``), whether it has ever passed (``passed``), how many
hints were shown (``hints``) and whether the learner gave up and saw the solution (``gave_up``).

Only light modules are imported here: `grade <problem>` checks the problem's name with this module before
it starts its workers' zygote, and learner code is never imported or run in this process (`grade watch`
runs `grade` in a subprocess for every run).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import signal
import sys
import textwrap
import time
import tomllib
from pathlib import Path

from grader.commands import graded
from grader.core.exits import Exit, usage_error
from grader.problem import pristine as pristine_mod
from grader.problem import problems
from grader.problem import checkout

DEBOUNCE_MS = 200  # saves closer together than this are one change, graded once
POLL_MS = 300  # how often polling looks at the file
RECHECK_MS = 2000  # even with file-system events, the file is looked at this often (an event can be missed)


# -- problem names ----------------------------------------------------------------------------------------

def _problem_command(command: str, doc: str, argv: list[str], options=lambda parser: None):
    """``argv`` of `grade <command> <problem> ...` parsed (``options`` adds the command's own), the checkout
    and the problem; a problem that is not there raises problems.UsageError or ProblemError."""
    parser = argparse.ArgumentParser(prog=f"grade {command}", description=doc)
    parser.add_argument("problem", help="the problem's name, e.g. t5_relative_pos")
    options(parser)
    args = parser.parse_args(argv)
    root = checkout.find_root()
    return args, root, problems.load(root, args.problem)


# -- the state file -----------------------------------------------------------------------------------------

def state_path(root: Path) -> Path:
    return root / ".grade" / "state.json"


def load_state(root: Path) -> dict:
    """The state file's contents; an empty state where it is missing or unreadable (it only remembers)."""
    path = state_path(root)
    try:
        state = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(state, dict):
        return {}
    return {slug: entry for slug, entry in state.items() if isinstance(entry, dict)}


def save_state(root: Path, state: dict) -> None:
    from grader.core.files import write_json

    write_json(state_path(root), state)


def update_entry(root: Path, slug: str, **changes) -> dict:
    """Sets ``changes`` in the entry of ``slug``, keeping its other keys; the entry as saved."""
    state = load_state(root)
    entry = {**state.get(slug, {}), **changes}
    state[slug] = entry
    save_state(root, state)
    return entry


def file_digest(path: Path) -> str | None:
    """The sha256 of the file at ``path``; None where there is none to read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def record_status(root: Path, slug: str, learner: Path, status: str) -> None:
    """Records a grading of the learner's own file: its status and digest, and a pass for good."""
    entry = load_state(root).get(slug, {})
    update_entry(root, slug, status=str(status), sha256=file_digest(learner),
                 passed=has_passed(entry) or str(status) == "pass")


def has_passed(entry: dict | None) -> bool:
    """Whether the learner's file has passed once (an entry written before ``passed`` was kept counts its
    last status)."""
    return bool(entry) and (entry.get("passed") is True or entry.get("status") == "pass")


def first_not_passed(root: Path, state: dict, skip: str | None = None) -> str | None:
    """The first problem in the learning order that has never passed (other than ``skip``)."""
    return next((slug for slug in checkout.slugs(root) if slug != skip and not has_passed(state.get(slug))), None)


def progress_line(root: Path, state: dict) -> str:
    """How many problems have passed, e.g. "3 of 10 passed", and how many were given up without a pass."""
    known = checkout.slugs(root)
    passed = sum(has_passed(state.get(slug)) for slug in known)
    gave_up = sum(bool(state.get(slug, {}).get("gave_up")) and not has_passed(state.get(slug)) for slug in known)
    return f"{passed} of {len(known)} passed" + (f", {gave_up} given up" if gave_up else "")


# -- grade next ---------------------------------------------------------------------------------------------

def cmd_next(argv: list[str]) -> int:
    """Show the first problem in the learning order not passed yet: where its statement and your file are,
    and the command that grades it."""
    argparse.ArgumentParser(prog="grade next", description=cmd_next.__doc__).parse_args(argv)
    try:
        root = checkout.find_root()
    except problems.UsageError as exc:
        return usage_error(str(exc))
    state = load_state(root)
    slug = first_not_passed(root, state)
    if slug is None:
        print(f"Every problem passes ({progress_line(root, state)}). Well done.")
        return Exit.OK
    print(f"Next: {slug}: {_title(root, slug)} ({progress_line(root, state)})")
    folder = root / "problems" / slug
    print(f"  statement: {checkout.relative(folder / 'README.md')}")
    print(f"  your file: {checkout.relative(folder / f'{slug}.py')}")
    print(f"  grade it:  {_command(slug)}   (or `{_command('watch')}` to grade it on every save)")
    if state.get(slug, {}).get("gave_up"):
        print("  You gave up on it and saw the solution; it counts once your own file passes.")
    return Exit.OK


def _title(root: Path, slug: str) -> str:
    try:
        return problems.load(root, slug).title
    except problems.ProblemError as exc:
        return f"(broken: {exc})"


def _command(*words: str) -> str:
    """A `grade` command as the user types it (see :func:`grader.render.report.program`)."""
    from grader.render import report

    return shlex.join([*report.program(), *words])


# -- grade hint ---------------------------------------------------------------------------------------------

def load_hints(problem: problems.Problem) -> list[str]:
    """The hints of ``problems/<slug>/hints.toml``, gentlest first; a ProblemError where it is malformed."""
    path = problem.folder / "hints.toml"
    where = f"problems/{problem.slug}/hints.toml"
    if not path.is_file():
        raise problems.ProblemError(f"{problem.slug} has no hints ({where} is missing)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise problems.ProblemError(f"{where} is not valid TOML: {exc}") from None
    entries = data.get("hint")
    extra = set(data) - {"hint"}
    if extra:
        raise problems.ProblemError(f"{where}: {sorted(extra)[0]!r} is not a key of the file (only [[hint]] tables)")
    if not isinstance(entries, list) or not entries:
        raise problems.ProblemError(f"{where} must hold one or more [[hint]] tables")
    hints = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"text"} or not isinstance(entry["text"], str) \
                or not entry["text"].strip():
            raise problems.ProblemError(f"{where}: hint[{i}] must have exactly one key, text, a non-empty string")
        hints.append(entry["text"].strip())
    return hints


def cmd_hint(argv: list[str]) -> int:
    """Show the next hint for a problem, one at a time, from a gentle nudge to close to the answer:
    `grade hint <problem> [--reset]`."""
    def options(parser):
        parser.add_argument("--reset", action="store_true", help="forget the hints shown: the next is the first again")

    try:
        args, root, problem = _problem_command("hint", cmd_hint.__doc__, argv, options)
        hints = load_hints(problem)
    except (problems.UsageError, problems.ProblemError) as exc:
        return usage_error(str(exc))
    if args.reset:
        update_entry(root, problem.slug, hints=0)
        print(f"Hints for {problem.slug} start again from the first; `{_command('hint', problem.slug)}` shows it.")
        return Exit.OK
    if problem.handout:  # what a hint suggests must work here
        hints = [f"{text}\n\n{HANDOUT_PART_NOTE}" if "--part" in text else text for text in hints]
    seen = load_state(root).get(problem.slug, {}).get("hints", 0)
    seen = seen if isinstance(seen, int) and seen >= 0 else 0
    if seen >= len(hints):
        print(f"No more hints for {problem.slug}: you have seen all {len(hints)}. The last one again:\n")
        print(_hint_text(hints[-1]))
        print(f"\nStill stuck? `{_command('solution', problem.slug, '--give-up')}` shows the reference solution.")
        return Exit.OK
    shown = seen + 1
    update_entry(root, problem.slug, hints=shown)
    print(f"{problem.slug}: hint {shown} of {len(hints)}\n")
    print(_hint_text(hints[shown - 1]))
    if shown < len(hints):
        print(f"\n`{_command('hint', problem.slug)}` again shows the next one.")
    else:
        print("\nThat was the last hint.")
    return Exit.OK


HANDOUT_PART_NOTE = ("In this handout, --part and the report's first wrong part are not available: they run the "
                     "reference's own modules, which a handout does not carry. The whole model is graded, and a "
                     "failure shows the call and the output that differ.")


def _hint_text(text: str) -> str:
    """A hint wrapped to the terminal, indented; its paragraphs (blank lines in the TOML) kept."""
    width = max(40, min(100, _terminal_width()) - 2)
    return "\n".join(textwrap.fill(paragraph, width, initial_indent="  ", subsequent_indent="  ",
                                       break_on_hyphens=False)
                     for paragraph in text.split("\n\n"))


def _terminal_width() -> int:
    return shutil.get_terminal_size((100, 24)).columns


# -- grade reset --------------------------------------------------------------------------------------------

def cmd_reset(argv: list[str]) -> int:
    """Put back the untouched stub of a problem; your file is kept next to it as <problem>.py.bak-N:
    `grade reset <problem>`."""
    try:
        args, root, problem = _problem_command("reset", cmd_reset.__doc__, argv)
    except (problems.UsageError, problems.ProblemError) as exc:
        return usage_error(str(exc))
    pristine, source = pristine_mod.stub(root, problem.slug, checkout.cache_folder(root))
    if pristine is None:
        return usage_error(f"cannot reset {problem.slug}: {source}; nothing was changed")
    stub = problem.stub
    current = stub.read_bytes() if stub.is_file() else None
    if current == pristine:
        print(f"{checkout.relative(stub)} is already the untouched stub; nothing was changed.")
        return Exit.OK
    backup = None
    if current is not None:
        try:
            backup = write_backup(stub, current)
        except OSError as exc:
            return usage_error(f"cannot keep a copy of {checkout.relative(stub)} ({exc.strerror}); nothing was changed")
    from grader.core.files import write_text

    write_text(stub, pristine.decode("utf-8"))
    # Starting over: the problem counts as not passed until the new file passes (`list`, `next`, progress).
    update_entry(root, problem.slug, status="not_started", sha256=file_digest(stub), passed=False)
    kept = f"; your version is in {checkout.relative(backup)}" if backup else ""
    print(f"{checkout.relative(stub)} is the untouched stub again (from {source}){kept}.")
    return Exit.OK


def write_backup(path: Path, data: bytes) -> Path:
    """Writes ``data`` to the first free ``<path>.bak-N`` (never over an older one), flushed to disk."""
    n = 1
    while True:
        backup = path.with_name(f"{path.name}.bak-{n}")
        try:
            with open(backup, "xb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            return backup
        except FileExistsError:
            n += 1


# -- grade solution -----------------------------------------------------------------------------------------

def cmd_solution(argv: list[str]) -> int:
    """Show the reference solution of a problem once your own file has passed, or after giving up:
    `grade solution <problem> [--give-up]`."""
    def options(parser):
        parser.add_argument("--give-up", action="store_true",
                            help="show it before you pass; `grade list` will say you gave up on the problem")

    try:
        args, root, problem = _problem_command("solution", cmd_solution.__doc__, argv, options)
    except (problems.UsageError, problems.ProblemError) as exc:
        return usage_error(str(exc))
    if not problem.reference.is_file():
        return usage_error(f"the solution to {problem.slug} is not in this copy (there is no "
                           f"solutions/{problem.slug}/{problem.slug}.py); ask whoever gave you the problems")
    entry = load_state(root).get(problem.slug, {})
    if not has_passed(entry) and not entry.get("gave_up"):
        if not args.give_up:
            return usage_error(f"your {problem.slug} has not passed yet, so the solution stays hidden: make "
                               f"`{_command(problem.slug)}` pass, try `{_command('hint', problem.slug)}`, or run "
                               f"`{_command('solution', problem.slug, '--give-up')}` to see it now", code=Exit.FAILED)
        update_entry(root, problem.slug, gave_up=True)
    print(f"# The reference solution of {problem.slug} ({checkout.relative(problem.reference)}):\n")
    print(problem.reference.read_text(encoding="utf-8"), end="")
    return Exit.OK


# -- grade watch --------------------------------------------------------------------------------------------

def cmd_watch(argv: list[str]) -> int:
    """Grade on every save: `grade watch [<problem>] [--file PATH] [--poll]`. With no problem it follows the
    learning order from the first problem not passed yet, and moves on to the next one after a pass."""
    parser = argparse.ArgumentParser(prog="grade watch", description=cmd_watch.__doc__)
    parser.add_argument("problem", nargs="?", help="the problem to watch (it stays on it after a pass)")
    parser.add_argument("--file", type=Path, help="watch and grade this module instead of the problem's stub")
    parser.add_argument("--poll", action="store_true",
                        help="look at the file every 0.3 s instead of waiting for file-system events (for "
                             "network and WSL mounts, where events do not arrive)")
    parser.add_argument("--max-runs", type=int, metavar="N",
                        help="stop after N gradings (for scripts and tests)")
    args = parser.parse_args(argv)
    if args.max_runs is not None and args.max_runs < 1:
        return usage_error("--max-runs must be 1 or more")
    try:
        root = checkout.find_root()
        if args.problem is not None:
            problems.load(root, args.problem)
        elif args.file is not None:
            raise problems.UsageError("--file needs the problem it is a solution of: grade watch <problem> --file PATH")
        if args.file is not None and not args.file.is_file():
            raise problems.UsageError(f"no file at {args.file}")
    except (problems.UsageError, problems.ProblemError) as exc:
        return usage_error(str(exc))
    slug = args.problem or first_not_passed(root, load_state(root))
    if slug is None:
        print(f"Every problem passes ({progress_line(root, load_state(root))}); nothing to watch.")
        return Exit.OK
    watcher = Watcher(root, slug, args.file.resolve() if args.file else None,
                      follow=args.problem is None, mode="poll" if args.poll else "events", max_runs=args.max_runs)
    return watcher.run()


class Watcher:
    """Grades one file, then again whenever its contents change; in the learning order, moves on after a pass."""

    def __init__(self, root: Path, slug: str, file: Path | None, *, follow: bool, mode: str, max_runs: int | None):
        self.root, self.slug, self.file = root, slug, file
        self.follow, self.mode, self.max_runs = follow, mode, max_runs
        self.runs = 0
        self.clear = sys.stdout.isatty()

    @property
    def path(self) -> Path:
        return self.file or self.root / "problems" / self.slug / f"{self.slug}.py"

    def run(self) -> int:
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as Ctrl-C does, the run in progress too
        try:
            while True:
                graded = file_digest(self.path)
                code = self.grade_once()
                if self.max_runs is not None and self.runs >= self.max_runs:
                    return Exit.OK
                if code == Exit.OK and self.follow:
                    following = first_not_passed(self.root, load_state(self.root), skip=self.slug)
                    if following is None:
                        print(f"\n{self.slug} passes, and so does every other problem. Well done.")
                        return Exit.OK
                    print(f"\n{self.slug} passes. Next in the learning order: {following}: {_title(self.root, following)} "
                          f"(statement: {checkout.relative(self.root / 'problems' / following / 'README.md')})")
                    self.slug, self.clear = following, False  # the pass stays on the screen
                    continue
                print(f"\nWatching {checkout.relative(self.path)} ({self.describe_mode()}): save it to grade it "
                      "again; Ctrl-C to stop.", flush=True)
                self.wait_for_change(graded)
                self.clear = sys.stdout.isatty()
        except KeyboardInterrupt:  # (the run of `grade` in progress, if any, has ended)
            print("\nStopped watching.")
            return Exit.OK

    def describe_mode(self) -> str:
        return {"events": "file-system events", "poll": f"polling every {POLL_MS / 1000:g} s"}.get(
            self.mode, f"polling every {POLL_MS / 1000:g} s, without watchfiles")

    def grade_once(self) -> int:
        """One run of `grade` on the file, in a subprocess (the same isolation and verdict as typing it)."""
        self.runs += 1
        if self.clear:
            print("\x1b[2J\x1b[H", end="")  # clear the screen, cursor to the top
        print(f"== grade watch: run {self.runs}: {self.slug} ({checkout.relative(self.path)}); "
              f"{progress_line(self.root, load_state(self.root))} ==", flush=True)
        words = [self.slug] + (["--file", str(self.file)] if self.file else [])
        return graded.run_on_terminal(graded.command(*words, program=graded.grade_program()))

    def wait_for_change(self, graded: str | None) -> None:
        """Returns once the file's contents differ from ``graded`` (several saves in quick succession are
        one change). File-system events through watchfiles; where they cannot be had, polling."""
        if file_digest(self.path) != graded:  # saved while it was being graded
            self.settle()
            return
        if self.mode in ("events", "poll"):
            try:
                import watchfiles
            except ImportError:
                self.fall_back("stat", "the watchfiles package is not installed")
            else:
                try:
                    for _ in self.changes(watchfiles):
                        if file_digest(self.path) != graded:
                            break
                except (OSError, RuntimeError) as exc:
                    self.fall_back("poll" if self.mode == "events" else "stat", str(exc) or type(exc).__name__)
                    return self.wait_for_change(graded)
        while file_digest(self.path) == graded:
            time.sleep(POLL_MS / 1000)
        self.settle()  # a change seen mid-way through several saves: grade the last of them

    def changes(self, watchfiles):
        """watchfiles' changes to the watched file (its folder is watched, so that a save that replaces the
        file is seen), in groups DEBOUNCE_MS apart, and an empty group every RECHECK_MS."""
        name = self.path.name
        return watchfiles.watch(self.path.parent, watch_filter=lambda change, path: Path(path).name == name,
                                debounce=1600, step=DEBOUNCE_MS, rust_timeout=RECHECK_MS, yield_on_timeout=True,
                                force_polling=True if self.mode == "poll" else None, poll_delay_ms=POLL_MS,
                                recursive=False)

    def fall_back(self, mode: str, why: str) -> None:
        self.mode = mode
        print(f"(file-system events do not work here: {why}; {self.describe_mode()} instead)", flush=True)

    def settle(self) -> None:
        """Waits until the file has not changed for DEBOUNCE_MS."""
        last = file_digest(self.path)
        while True:
            time.sleep(DEBOUNCE_MS / 1000)
            now = file_digest(self.path)
            if now == last:
                return
            last = now


def _interrupt(signum: int, frame) -> None:
    raise KeyboardInterrupt

