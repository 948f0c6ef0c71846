"""What is kept on disk between runs, and the one fingerprint that keys all of it.

Reference outputs (per problem and per trusted module) and the inputs Hypothesis draws are kept in
``.grade/cache`` (GRADE_CACHE_DIR overrides). Every file's name hashes
:func:`grader.sandbox.fingerprint.fingerprint` and the sources the contents depend on, so a change to any of
them is a miss, never a stale hit. Any failure to read a file is a miss too. The grader reads what it needs
before learner code starts (which cannot write there: see :mod:`grader.sandbox.isolation`) and writes after
its run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from grader.core import kinds
from grader.core.files import atomic, write_json
from grader.sandbox.fingerprint import fingerprint

def file_key(*parts: str | bytes | Path) -> str:
    """A short hash of the fingerprint and ``parts`` (a path stands for its contents)."""
    h = hashlib.sha256(fingerprint().encode())
    for part in parts:
        data = part.read_bytes() if isinstance(part, Path) else part
        h.update((data.encode() if isinstance(data, str) else data) + b"\0")
    return h.hexdigest()[:16]


class ReferenceCache:
    """Outputs of one trusted module by input digest, loaded from and saved to one file."""

    def __init__(self, folder: Path | None, name: str, sources: list[Path]):
        self.path = folder / f"{name}-{file_key(*sources)}.npz" if folder else None
        self.entries: dict[str, np.ndarray] = {}
        self.new = 0
        if self.path is not None:
            try:
                with np.load(self.path, allow_pickle=False) as data:
                    self.entries = {k: data[k] for k in data.files}
            except Exception:  # noqa: BLE001  (missing, truncated, not an archive: a miss)
                self.entries = {}

    def get(self, digest: str) -> np.ndarray | None:
        return self.entries.get(digest)

    def put(self, digest: str, output: np.ndarray) -> None:
        self.entries[digest] = output
        self.new += 1

    def drop(self, digest: str) -> None:
        self.entries.pop(digest, None)

    def save(self) -> None:
        if self.path is None or not self.new:
            return
        try:
            with atomic(self.path, binary=True) as f:
                np.savez(f, **self.entries)
        except OSError:
            pass  # a cache that cannot be written costs time, not a verdict


class TreeCache(dict):
    """(trusted module's key, traced signature) -> its Flax parameter tree (path -> shape; None where it
    builds none). The reference's trees are kept on disk, in one JSON file, like its outputs: checking a
    learner's tree on every run then costs a re-grade no reference worker."""

    def __init__(self, folder: Path | None, name: str, sources: list[Path]):
        super().__init__()
        self.path = folder / f"{name}-trees-{file_key(*sources)}.json" if folder else None
        try:
            for signature, tree in json.loads(self.path.read_text()).items():
                if tree is None or all(isinstance(v, list) and all(isinstance(n, int) for n in v)
                                       for v in tree.values()):
                    self["reference", signature] = tree
        except Exception:  # noqa: BLE001  (missing, unreadable, not what was written: a miss)
            pass
        self.kept = len(self)

    def save(self) -> None:
        trees = {signature: tree for (key, signature), tree in self.items() if key == "reference"}
        if self.path is None or len(trees) == self.kept:
            return
        try:
            write_json(self.path, trees)
        except OSError:
            pass  # a cache that cannot be written costs time, not a verdict


def inputs_file(folder: Path | None, slug: str, sources: list[Path], max_examples: int) -> Path | None:
    """Where the inputs Hypothesis draws for a problem are kept (it draws them derandomised: the same
    inputs every run, given the same strategy, settings and libraries)."""
    if folder is None:
        return None
    return folder / f"{slug}-inputs-{file_key(str(max_examples), *sources)}.npz"


def save_inputs(path: Path, cases: list[dict]) -> None:
    entries = {f"{i}/{name}": np.asarray(value) for i, case in enumerate(cases) for name, value in case.items()
               if name != kinds.MOVED}  # (a problem's mark, put back on reading)
    try:
        with atomic(path, binary=True) as f:
            np.savez(f, count=np.asarray(len(cases)), **entries)
    except OSError:
        pass


def load_inputs(path: Path, arg_kinds: dict[str, str]) -> list[dict] | None:
    """The cases saved at ``path``, each checked against the argument kinds again; None on any failure."""
    try:
        with np.load(path, allow_pickle=False) as data:
            cases = []
            for i in range(int(data["count"])):
                case = {}
                for name, kind in arg_kinds.items():
                    value = data[f"{i}/{name}"]
                    case[name] = kinds.kind(kind).coerce(value if value.ndim else value.item())
                cases.append(case)
            return cases
    except Exception:  # noqa: BLE001  (missing, truncated, tampered with: drawn again)
        return None
