"""A problem's untouched stub, whatever the learner has done to the file they edit.

What a stub asks for (its steps and helpers: the parts a failure is pointed at) is read from the stub as
it was handed out, never from the learner's edited copy, in which the TODOs are gone once filled in. It
is found, in this order: ``.grade/pristine/<slug>.py`` (a handout keeps it there); else the newest
version committed in git that still raises NotImplementedError at a TODO (a learner's own commits of work
in progress are passed over), kept in the cache folder under the commit git's HEAD names, so that a
re-grade reads one file and starts no git; else none (and the caller says why, or reads the stub as it is).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

KEPT = Path(".grade") / "pristine"  # below a checkout or a handout


def is_untouched(source: bytes) -> bool:
    """Whether a stub's source still has a TODO and raises NotImplementedError after it."""
    text = source.decode("utf-8", errors="replace")
    todo = text.find("TODO")
    return todo >= 0 and "raise NotImplementedError" in text[todo:]


def stub(root: Path, slug: str, cache: Path | None = None) -> tuple[bytes | None, str]:
    """The untouched stub of ``slug`` in the checkout or handout ``root``, and where it came from (a path or
    a commit); else None and why. ``cache``: a folder where what git gave is kept by HEAD's commit."""
    kept = root / KEPT / f"{slug}.py"
    if kept.is_file():
        return kept.read_bytes(), str(KEPT / f"{slug}.py")
    head = _head(root)
    saved = cache / "pristine" / f"{slug}-{head}.py" if cache is not None and head else None
    if saved is not None and saved.is_file():
        try:
            return saved.read_bytes(), f"git commit {saved.with_suffix('.commit').read_text()[:10]}"
        except OSError:
            pass
    relative = f"problems/{slug}/{slug}.py"
    log = _git(root, "log", "--format=%H", "--", relative)
    if log is None:
        return None, f"there is no untouched copy (no {KEPT / f'{slug}.py'}, and this is not a git checkout)"
    for commit in log.decode().split():
        text = _git(root, "show", f"{commit}:./{relative}")
        if text is not None and is_untouched(text):
            if saved is not None:
                _save(saved, text, commit)
            return text, f"git commit {commit[:10]}"
    return None, (f"no commit of {relative} in git is an untouched stub (commit the stub untouched first), and "
                  f"there is no {KEPT / f'{slug}.py'}")


def _head(root: Path) -> str | None:
    """The commit HEAD names, read from ``.git`` without starting git (None where that cannot be done: a
    handout, a worktree, a detached or unusual layout; then git itself is asked, uncached)."""
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head if len(head) == 40 else None
        ref = head[5:]
        loose = git / ref
        if loose.is_file():
            return loose.read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(f" {ref}"):
                return line.split()[0]
    except OSError:
        return None
    return None


def _save(path: Path, text: bytes, commit: str) -> None:
    """Keep ``text`` as ``path`` (with the commit it came from beside it, written first), whole or not at all."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_suffix(".commit").write_text(commit)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_bytes(text)
        os.replace(tmp, path)
    except OSError:
        pass


def _git(root: Path, *args: str) -> bytes | None:
    """What ``git -C root <args>`` prints; None where git is missing or fails."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def handed_out(root: Path, slugs: list[str], cache: Path | None = None, say=lambda sentence: None) -> dict[str, bytes]:
    """What a handout or an autograder ships as each problem's stub: its untouched stub; where the checkout's
    own file differs (an instructor who solved the kata in place), ``say`` is told which went out. Raises
    ValueError naming a problem whose untouched stub cannot be found: a solved file must never go out as a
    stub."""
    shipped = {}
    for slug in slugs:
        text, source = stub(root, slug, cache)
        if text is None:
            raise ValueError(f"no untouched stub of {slug} to hand out: {source}")
        current = root / "problems" / slug / f"{slug}.py"
        try:
            edited = current.read_bytes() != text
        except OSError:
            edited = True
        if edited:
            say(f"problems/{slug}/{slug}.py is edited in this checkout: the untouched stub (from {source}) goes "
                f"out instead")
        shipped[slug] = text
    return shipped
