"""The trusted modules' outputs kept between runs, each checked before it is kept or believed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grader.core import kinds
from grader.grading.cache import ReferenceCache
from grader.grading.errors import ReferenceError
from grader.grading.known import Known
from grader.grading.sources import TrustedSources
from grader.problem.problems import Problem
from grader.problem.checkout import relative


class KeptOutputs:
    """Each trusted module's flat outputs by input digest, under jax.jit and eagerly (``caches``, by (key,
    jit)), on disk in ``folder`` (None: kept for this run only).

    The reference's outputs kept from earlier runs that the statement or golden.json contradicts are dropped
    (and computed again); a fresh one that does is a broken problem. A known mistake's outputs that
    golden.json keeps stand in for running it while its source is the one they came from (``seed_golden``;
    `grade check`, which checks them, computes its own)."""

    def __init__(self, problem: Problem, folder: Path | None, sources: TrustedSources, known: Known,
                 seed_golden: bool = True):
        self.problem, self.folder, self.sources, self.known = problem, folder, sources, known
        self.seed_golden = seed_golden
        reference = ReferenceCache(folder, problem.slug, sources.depends_on())
        for digest in list(reference.entries):
            if known.disagreement(digest, reference.entries[digest]) is not None:
                reference.drop(digest)
        self.caches: dict[tuple[str, bool], ReferenceCache] = {("reference", True): reference}

    def register(self, key: str, path: Path) -> None:
        """The caches of the module ``key`` (read by the sources, at ``path``), and golden.json's outputs of a
        known mistake (``pitfall_<name>``) in them."""
        for jit in (True, False):
            if (key, jit) not in self.caches:
                name = f"{self.problem.slug}.{key}.{'jit' if jit else 'eager'}"
                self.caches[key, jit] = ReferenceCache(self.folder, name, self.sources.depends_on(path))
        if self.seed_golden and key.startswith("pitfall_"):
            source = self.sources.variant_source_key(key)
            for digest, output in self.known.pitfall_outputs(key.removeprefix("pitfall_"), source):
                self.caches[key, True].entries.setdefault(digest, output)

    def cached(self, key: str, args: dict, jit: bool = True) -> np.ndarray | None:
        cache = self.caches.get((key, jit))
        return None if cache is None else cache.get(kinds.args_digest(self.problem.args, args))

    def keep(self, key: str, args: dict, jit: bool, reply) -> np.ndarray:
        """``key``'s flat output in ``reply`` (its answer on ``args``), kept. A module that raised or returned no
        array raises :class:`ReferenceError`; so does a reference whose output has another dtype or shape
        than problem.toml says, or that the statement or golden.json contradicts."""
        problem, path = self.problem, self.sources.paths[key]
        call = problem.call_text(args)
        if not reply.ok:
            err = reply.error
            where = f", line {err['line']}" if err["line"] else ""
            raise ReferenceError(f"{relative(path)} raised {err['type']}: {err['message']}{where} on {call}")
        if reply.result.array is None:
            raise ReferenceError(f"{relative(path)} returned {reply.result.type} {reply.result.dtype or ''} "
                                 f"{list(reply.result.shape or [])} on {call}")
        output = reply.result.array.reshape(-1)
        digest = kinds.args_digest(problem.args, args)
        if key == "reference":
            if output.size != int(np.prod(problem.natural_shape(args))) or output.dtype.name != problem.output_dtype:
                raise ReferenceError(f"{relative(path)} returned {output.dtype.name} of shape {reply.result.shape} on "
                                     f"{call}; problem.toml says {problem.output_dtype} of shape "
                                     f"{problem.natural_shape(args)}")
            where = self.known.disagreement(digest, output)
            if where is not None:
                raise ReferenceError(f"the reference disagrees with {where} on {call} (does an environment "
                                     f"variable, such as one of JAX_*, XLA_* or FLAX_*, change its numerics?)")
        if (key, jit) in self.caches:
            self.caches[key, jit].put(digest, output)
        return output

    def save(self) -> None:
        for cache in self.caches.values():
            cache.save()
