"""The trusted modules' sources, each read once, before learner code starts."""

from __future__ import annotations

import hashlib
from pathlib import Path

from grader.problem.problems import Problem


class TrustedSources:
    """The sources of the modules the trusted worker runs, by key: the reference first, then every module
    registered since (the known-wrong and correct variants, a module `grade check` grades), and the problem's
    grading hooks (``grading.py``, where it has one). What the worker loads, and what a kept output of each
    depends on."""

    def __init__(self, problem: Problem, hooks):
        self.reference = problem.reference
        self.hook_paths = [problem.solution_folder / "grading.py"] if hooks else []
        self.hook_bytes = [path.read_bytes() for path in self.hook_paths]
        self.paths: dict[str, Path] = {"reference": problem.reference}
        self.sources: dict[str, bytes] = {"reference": problem.reference.read_bytes()}

    def add(self, key: str, path: Path) -> None:
        """Read the module at ``path`` as ``key``, unless a module of that key was read already."""
        if key not in self.sources:
            self.sources[key], self.paths[key] = path.read_bytes(), path

    def items(self) -> list[tuple[str, Path, bytes]]:
        """(key, path, source) of every module, the reference first."""
        return [(key, self.paths[key], source) for key, source in self.sources.items()]

    def depends_on(self, path: Path | None = None) -> list[Path]:
        """The files a kept output depends on: the module at ``path`` (none: the reference's alone), the
        reference (a variant may be the reference with one override) and the grading hooks."""
        return ([path] if path is not None else []) + [self.reference] + self.hook_paths

    def variant_source_key(self, key: str) -> str:
        """What a known mistake's outputs depend on, as a short hash: its module, the reference it may
        override and the problem's grading hooks (not the grader's fingerprint: golden.json is committed)."""
        h = hashlib.sha256()
        for part in (self.sources[key], self.sources["reference"], *self.hook_bytes):
            h.update(part + b"\0")
        return h.hexdigest()[:16]
