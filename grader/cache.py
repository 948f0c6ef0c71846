"""Reference outputs kept on disk between runs, keyed by everything that could change them.

The key of an entry hashes the problem, the reference source (and its grading hooks), the versions of
jax, jaxlib, flax and numpy, the JAX platform, and the inputs. The grader reads a problem's entries into
memory before any learner code starts and writes them back after the learner's worker has ended.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path

import numpy as np

PACKAGES = ("jax", "jaxlib", "flax", "numpy")


@functools.cache
def environment_fingerprint() -> str:
    """Library versions and the JAX platform (plugins installed, JAX_PLATFORMS), without importing jax."""
    parts = []
    for name in PACKAGES:
        try:
            parts.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{name}=none")
    plugins = sorted(d.metadata["Name"] for d in importlib.metadata.distributions()
                     if (d.metadata["Name"] or "").lower().startswith(("jax-cuda", "jax_cuda", "jax-rocm", "libtpu")))
    parts.append("plugins=" + ",".join(plugins))
    parts.append("platforms=" + os.environ.get("JAX_PLATFORMS", ""))
    return ";".join(parts)


def args_digest(args: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(args):
        value = args[name]
        if isinstance(value, np.ndarray):
            h.update(f"{name}:{value.dtype.name}:{value.shape}:".encode())
            h.update(np.ascontiguousarray(value).tobytes())
        else:
            h.update(f"{name}:{type(value).__name__}:{value!r};".encode())
    return h.hexdigest()[:32]


class ReferenceCache:
    """In-memory map from inputs to reference outputs, loaded from and saved to one file per version."""

    def __init__(self, folder: Path | None, slug: str, sources: list[Path]):
        h = hashlib.sha256(environment_fingerprint().encode())
        for path in sources:
            h.update(path.read_bytes())
        self.path = folder / f"{slug}-{h.hexdigest()[:16]}.npz" if folder else None
        self.entries: dict[str, np.ndarray] = {}
        self.new = 0
        if self.path and self.path.is_file():
            try:
                with np.load(self.path, allow_pickle=False) as data:
                    self.entries = {k: data[k] for k in data.files}
            except (OSError, ValueError):
                self.entries = {}

    def get(self, args: dict) -> np.ndarray | None:
        return self.entries.get(args_digest(args))

    def put(self, args: dict, output: np.ndarray) -> None:
        self.entries[args_digest(args)] = output
        self.new += 1

    def save(self) -> None:
        if not self.path or not self.new:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(tmp, **self.entries)
        os.replace(tmp, self.path)


def inputs_file(folder: Path | None, slug: str, sources: list[Path], max_examples: int) -> Path | None:
    """Where the inputs Hypothesis draws for a problem are kept; the name hashes what decides them (the
    strategy and problem files, the grader's settings, the library versions), as Hypothesis draws them
    derandomised: the same inputs every run."""
    if folder is None:
        return None
    try:
        hypothesis = importlib.metadata.version("hypothesis")
    except importlib.metadata.PackageNotFoundError:
        hypothesis = "none"
    h = hashlib.sha256(f"{environment_fingerprint()};hypothesis={hypothesis};{max_examples}".encode())
    for path in sources:
        h.update(path.read_bytes())
    return folder / f"{slug}-inputs-{h.hexdigest()[:16]}.npz"


def save_inputs(path: Path, cases: list[dict]) -> None:
    entries = {f"{i}/{name}": np.asarray(value) for i, case in enumerate(cases) for name, value in case.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
    np.savez(tmp, count=np.asarray(len(cases)), **entries)
    os.replace(tmp, path)


def load_inputs(path: Path, kinds: dict[str, str]) -> list[dict] | None:
    """The cases saved at ``path`` (ints and floats as Python numbers again), or None."""
    if not path.is_file():
        return None
    convert = {"int": int, "float": float}
    try:
        with np.load(path, allow_pickle=False) as data:
            return [{name: convert.get(kind, np.asarray)(data[f"{i}/{name}"]) for name, kind in kinds.items()}
                    for i in range(int(data["count"]))]
    except (OSError, ValueError, KeyError):
        return None


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)
