"""``grade gradescope``: an autograder zip for Gradescope, and the grading it runs there.

``grade gradescope <problem> ... -o autograder.zip`` writes a zip with ``setup.sh`` and ``run_autograder`` at
its root and this project inside: the grader, the named problems and their solutions, and what
``pip install -c requirements.lock .`` needs. Gradescope unpacks it into ``/autograder/source`` and runs
``setup.sh`` once, as root, when it builds the autograder's image: Python 3.11 or newer (apt-get where the
image has none), the project in a virtual environment ``/autograder/source/.venv``, an unprivileged user
for learner code to run as, and each problem's reference graded once (which fills the caches and fails the build if the
install does not work).

For each submission Gradescope runs ``run_autograder``, which runs :func:`autograde` (``python -m
grader.instructor.gradescope``): each ``<problem>.py`` of ``/autograder/submission`` (at the top or in one folder) is
graded with ``grade <problem> --file ... --json``, and ``/autograder/results/results.json`` written with
:func:`grader.render.formats.gradescope`, before the first grading and again after each one, so that there is
one whatever happens: a missing file scores 0 with a sentence saying so, a grading that breaks scores 0
with a sentence saying it was not the student's fault.

``AUTOGRADER_ROOT`` replaces ``/autograder`` and ``AUTOGRADER_VENV`` the virtual environment (tests run a
fake tree with the checkout's environment).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from grader.core.exits import Exit, usage_error
from grader.commands import graded as graded_mod
from grader.core.verdict_report import Report
from grader.core.verdict import Status
from grader.problem import checkout, pristine, problems
from grader.render import formats
from grader.core import submission as submission_mod

CONFIG = "gradescope.json"  # at the zip's root: the problems, their points, visibility, the user to grade as
PROJECT_FILES = ("pyproject.toml", "requirements.lock", "README.md")
DEFAULT_USER = "student"
GRADE_TIMEOUT = 900  # seconds for one `grade` command, beyond its own limits on learner code
SKIPPED_PARTS = {"__pycache__", ".grade", ".hypothesis", ".pytest_cache"}
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # every entry's date: the same zip from the same files
BROKEN = ("The autograder could not grade this problem ({}). This is not a problem with your code: please "
          "tell your instructor.")

SETUP = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder: Python >= 3.11 with venv (apt-get where
# the image has none), this project in a virtual environment, the user learner code runs as, and each problem's
# reference graded once (the caches filled; the build fails if the install does not grade).
# `bash setup.sh --dry-run` prints the commands that change the system instead of running them.
set -euo pipefail
dry=0
[ "${1:-}" = "--dry-run" ] && dry=1
root="${AUTOGRADER_ROOT:-/autograder}"
source="$root/source"
venv="${AUTOGRADER_VENV:-$source/.venv}"
# gradescope.json is one line (grade gradescope writes it so): the problems, and the user learner code runs as.
problems="$(sed -n 's/.*"problems": \[\([^]]*\)\].*/\1/p' "$source/gradescope.json" | tr -d '",')"
user="$(sed -n 's/.*"run_as": "\([^"]*\)".*/\1/p' "$source/gradescope.json")"

run() { if [ "$dry" = 1 ]; then echo "+ $*"; else "$@"; fi; }
usable() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
find_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null && usable "$candidate"; then echo "$candidate"; return 0; fi
  done
  return 1
}

if ! python="$(find_python)"; then
  export DEBIAN_FRONTEND=noninteractive
  run apt-get update -q
  run apt-get install -y -q python3 python3-venv python3-pip
  # An older Ubuntu's python3 is 3.10: its python3.11 packages, then.
  python="$(find_python)" || run apt-get install -y -q python3.11 python3.11-venv
  python="$(find_python)" || python=python3.11
fi
echo "setup: using $python"
run "$python" -m venv "$venv"
run "$venv/bin/python" -m pip install -q --upgrade pip
run "$venv/bin/python" -m pip install -q -c "$source/requirements.lock" "$source"
run chmod -R a+rX,go-w "$source"
if [ -n "$user" ]; then
  id -u "$user" >/dev/null 2>&1 || run useradd --no-create-home --shell /usr/sbin/nologin "$user"
fi
for slug in $problems; do
  echo "setup: grading the reference of $slug"
  (cd "$source" && run env GRADE_WARM_SECONDS=0 "$venv/bin/grade" "$slug" --file "solutions/$slug/$slug.py")
done
for private in "$source/solutions" "$source/.grade"; do  # root's alone: learner code runs as $user
  if [ -e "$private" ] || [ "$dry" = 1 ]; then run chmod -R go-rwx "$private"; fi
done
"""

RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for each submission: grade /autograder/submission, write /autograder/results/results.json.
# AUTOGRADER_ROOT and AUTOGRADER_VENV replace /autograder and /autograder/source/.venv.
root="${AUTOGRADER_ROOT:-/autograder}"
venv="${AUTOGRADER_VENV:-$root/source/.venv}"
results="$root/results/results.json"
mkdir -p "$root/results"
rm -f "$results"
cd "$root/source" && "$venv/bin/python" -m grader.instructor.gradescope --root "$root" --venv "$venv"
if [ ! -s "$results" ]; then
  # The grading could not start at all (a broken environment): a results.json all the same, that says so.
  cat > "$results" <<'EOF'
{"score": 0.0, "output": "The autograder could not run, so nothing was graded. This is not a problem with your code: please tell your instructor.", "output_format": "text", "stdout_visibility": "hidden", "tests": []}
EOF
fi
exit 0
"""


# -- building the zip -----------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    """Instructors: `grade gradescope <problem> [<problem> ...] [-o autograder.zip]` writes an autograder
    for Gradescope that grades the named problems (upload it on the assignment's Configure Autograder
    page; docs/gradescope.md has the steps)."""
    parser = argparse.ArgumentParser(prog="grade gradescope", description=main.__doc__)
    parser.add_argument("problems", nargs="+", help="the problems the assignment grades")
    parser.add_argument("-o", "--output", type=Path, default=Path("autograder.zip"),
                        help="the zip to write (default: autograder.zip)")
    parser.add_argument("--points", type=float, default=1.0,
                        help="points for each problem, all or nothing (default: 1)")
    parser.add_argument("--visibility", choices=formats.VISIBILITIES, default="visible",
                        help="when students see the results (default: visible, at once)")
    parser.add_argument("--run-as", default=DEFAULT_USER, metavar="USER",
                        help="the unprivileged user learner code runs as on Gradescope where the kernel "
                             f"refuses namespaces (default: {DEFAULT_USER}; '' for nobody)")
    parser.add_argument("--force", action="store_true", help="replace the output file if it exists")
    args = parser.parse_args(argv)
    try:
        root = checkout.find_checkout("`grade gradescope`")
        slugs = list(dict.fromkeys(problems.load(root, slug).slug for slug in args.problems))
        if not (args.points > 0 and args.points < float("inf")):
            raise problems.UsageError(f"--points must be a positive number, not {args.points:g}")
        if args.run_as and not args.run_as.replace("-", "").replace("_", "").isalnum():
            raise problems.UsageError(f"--run-as {args.run_as!r} is not a user name")
        if args.output.is_dir():
            raise problems.UsageError(f"{args.output} is a folder, not a zip file")
        if args.output.exists() and not args.force:
            raise problems.UsageError(f"{args.output} exists; pass --force to replace it")
        stubs = pristine.handed_out(root, slugs, checkout.cache_folder(root),
                                    lambda sentence: print(f"grade gradescope: {sentence}", file=sys.stderr))
    except (problems.UsageError, problems.ProblemError, ValueError) as exc:
        return usage_error(str(exc))
    config = {"format": 1, "problems": slugs, "points": args.points, "visibility": args.visibility,
              "run_as": args.run_as}
    names = build(root, config, args.output, stubs)
    print(f"wrote {args.output}: {len(names)} files, grading {', '.join(slugs)} "
          f"({args.points:g} point{'s' * (args.points != 1)} each)")
    return Exit.OK


def build(root: Path, config: dict, output: Path, stubs: dict[str, bytes] | None = None) -> list[str]:
    """Write the autograder zip for ``config`` from the checkout ``root`` to ``output`` (atomically), each
    problem's stub the untouched one (``stubs``: see :func:`grader.problem.pristine.handed_out`), also kept
    where the grader reads a stub's parts from; the names it holds."""
    stubs = stubs or pristine.handed_out(root, config["problems"], checkout.cache_folder(root))
    files = {"setup.sh": SETUP.encode(), "run_autograder": RUN.encode(),
             CONFIG: (json.dumps(config) + "\n").encode()}  # one line: setup.sh reads it with sed
    for name in PROJECT_FILES:
        files[name] = (root / name).read_bytes()
    secret = checkout.ensure_secret(root)  # the course's own: students' inputs no handout holds
    files[secret.relative_to(root).as_posix()] = secret.read_bytes()
    folders = [root / "grader"] + [root / side / slug for slug in config["problems"]
                                   for side in ("problems", "solutions")]
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(root)
            if (path.is_file() and not SKIPPED_PARTS & set(relative.parts) and path.suffix != ".pyc"
                    and ".bak-" not in path.name):
                files[relative.as_posix()] = path.read_bytes()
    for slug, text in stubs.items():
        for name in (f"problems/{slug}/{slug}.py", (pristine.KEPT / f"{slug}.py").as_posix()):
            files[name] = text
    from grader.core.files import atomic

    with atomic(output, binary=True) as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.external_attr = (0o100755 if name in ("setup.sh", "run_autograder") else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    return sorted(files)


# -- grading a submission (on Gradescope) ---------------------------------------------------------------

def autograde(argv: list[str]) -> int:
    """Grade ``<root>/submission`` for every problem of the autograder's config and write
    ``<root>/results/results.json``, after each problem (what ``run_autograder`` runs)."""
    parser = argparse.ArgumentParser(prog="python -m grader.instructor.gradescope", description=autograde.__doc__)
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT") or "/autograder"))
    parser.add_argument("--venv", type=Path, help="the virtual environment with `grade` (default: <root>/source/.venv)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    source, results = root / "source", root / "results" / "results.json"
    config = json.loads((source / CONFIG).read_text())
    venv = args.venv or source / ".venv"
    grade = venv / "bin" / "grade"
    slugs, points = config["problems"], float(config["points"])
    settings = {"visibility": config.get("visibility", "visible")}
    started = time.monotonic()
    verdicts = [Report.not_graded(slug, Status.ERROR, "Not graded: the autograder stopped before it reached this "
                              "problem (most likely it ran out of time). This is not a problem with your "
                              "code: please tell your instructor.") for slug in slugs]
    write_results(results, formats.gradescope(verdicts, points, **settings))
    env = grading_env(config.get("run_as") or "")
    for i, slug in enumerate(slugs):
        try:
            verdicts[i] = grade_one(slug, grade, source, root / "submission", env)
        except Exception as exc:  # noqa: BLE001 - whatever breaks, the student gets a results.json
            print(f"{slug}: the autograder broke: {type(exc).__name__}: {exc}")
            verdicts[i] = Report.not_graded(slug, Status.ERROR, BROKEN.format(f"{type(exc).__name__} in the autograder"))
        write_results(results, formats.gradescope(verdicts, points, execution_time=time.monotonic() - started,
                                                  **settings))
    stop_zygote(venv, source, env)
    print(f"wrote {results}")
    return Exit.OK


def grade_one(slug: str, grade: Path, source: Path, submission: Path, env: dict) -> Report:
    """The report of ``<slug>.py`` in ``submission``; for a file that is missing or a grading that breaks,
    one that says so (see :meth:`grader.core.verdict_report.Report.not_graded`)."""
    found = submitted_file(submission, slug)
    if isinstance(found, str):
        print(f"{slug}: {found}")
        return Report.not_graded(slug, Status.NOT_STARTED, found)
    # Graded from a copy, read as a submission (no link followed, bounded), in a folder of its own; the
    # upload and the results are hidden from learner code.
    print(f"{slug}: {found}", flush=True)
    with tempfile.TemporaryDirectory(prefix="grade-submission-") as copies:
        try:
            copy = submission_mod.private_copy(found, submission, Path(copies) / "submission", f"{slug}.py")
        except submission_mod.Refused as exc:
            print(f"{slug}: {exc}")
            return Report.not_graded(slug, Status.ERROR, f"Your {slug}.py was not graded: {exc}.")
        env = submission_mod.hidden_with(env, [submission, submission.parent / "results"])
        return run_grade(slug, grade, source, copy, env)


def run_grade(slug: str, grade: Path, source: Path, file: Path, env: dict) -> Report:
    """The verdict of `grade <slug> --file <file> --json`, or one that says why there is none."""
    command = graded_mod.grade_argv(slug, file, program=[str(grade)])
    print(f"{slug}: {' '.join(command)}", flush=True)
    try:
        graded = graded_mod.grade(command, GRADE_TIMEOUT, env=env, cwd=source)
    except OSError as exc:
        print(f"{slug}: grade did not start: {exc}")
        return Report.not_graded(slug, Status.ERROR, BROKEN.format("the grader did not start"))
    done = graded.done
    if done.stderr.strip():
        print(f"{slug}: grade's stderr:\n{done.stderr.decode(errors='replace').strip()}")
    if not graded.graded:  # a usage error or a broken problem: the instructor's to fix
        print(f"{slug}: no verdict: {graded.why_not()}; its output:\n{done.stdout.decode(errors='replace')[-4000:]}")
        return Report.not_graded(slug, Status.ERROR, BROKEN.format(graded.why_not(said=False)))
    verdict = graded.verdict
    print(f"{slug}: {verdict.status} in {verdict.duration_s} s (learner code confined: "
          f"{verdict.isolation}): {verdict.message}", flush=True)
    return verdict


def submitted_file(submission: Path, slug: str) -> Path | str:
    """``<slug>.py`` in the submission, at its top or in one folder below it; else a sentence for the
    student saying what is wrong."""
    name = f"{slug}.py"
    if (submission / name).is_file():
        return submission / name
    found = sorted(p for p in submission.glob(f"*/{name}")
                   if p.is_file() and not p.parent.name.startswith((".", "__MACOSX")))
    if len(found) == 1:
        return found[0]
    if found:
        folders = ", ".join(p.parent.name for p in found)
        return f"Your submission has {name} in {len(found)} folders ({folders}): submit only one."
    return (f"Your submission has no {name}, so {slug} was not graded: submit your solution as a file named "
            f"{name} (at the top of your upload, or in one folder).")


def grading_env(user: str) -> dict:
    """The environment of the gradings. Where this process is root (on Gradescope) and the kernel refuses
    the namespaces that confine learner code, the grader stays root and learner code runs as an
    unprivileged user (a user of its own per worker, else ``user``, the one setup.sh made; see
    :mod:`grader.sandbox.users`): it then cannot signal, trace or read the grader, nor write the results;
    what gives the answers away (``solutions/``, the caches) and the upload are withheld from other users
    before it starts (:func:`grader.sandbox.users.withhold`), and it gets its source from the grader."""
    env = dict(os.environ, **{checkout.SECRET_VARIABLE: "1"})  # the inputs no handout recorded, too
    return dict(env, GRADE_LEARNER_USER=user) if user else env


def stop_zygote(venv: Path, source: Path, env: dict) -> None:
    """Stop the process the gradings forked their workers from, which would wait for a next run that
    never comes."""
    code = ("from pathlib import Path; from grader.problem import checkout; from grader.sandbox import zygote; "
            "zygote.stop(checkout.cache_folder(Path.cwd()))")
    try:
        subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=source, timeout=60, env=env,
                       stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"the zygote was not stopped: {exc}")


def write_results(path: Path, results: dict) -> None:
    """``results`` at ``path``, atomically (Gradescope may read it at any moment after a time limit)."""
    from grader.core.files import write_text

    write_text(path, json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(autograde(sys.argv[1:]))
