"""What the trusted side knows of the right answers before it runs anything: the reference's outputs that
the statement and ``golden.json`` give, golden.json's outputs of the known mistakes, and the grading hooks'
other acceptable answers."""

from __future__ import annotations

import json

import numpy as np

from grader.core import kinds
from grader.core.compare import agrees
from grader.problem.problems import Problem


class Known:
    """The outputs the statement and golden.json give, by input digest (``outputs``: where each is given, its
    input, the flat output), and golden.json's outputs of the known mistakes (``pitfalls``: name ->
    [(the variant's source key, input digest, output)], written by `grade check --update-golden`)."""

    def __init__(self, problem: Problem, hooks):
        self.problem, self.hooks = problem, hooks
        self.outputs: dict[str, tuple[str, dict, np.ndarray]] = {}
        self.pitfalls: dict[str, list[tuple[str, str, np.ndarray]]] = {}
        for ex in problem.examples:
            if ex.expected is not None:
                self.outputs[self.digest(ex.args)] = (f"the statement's example {ex.name!r}", ex.args,
                                                      ex.expected.reshape(-1))
        path = problem.solution_folder / "golden.json"
        if path.is_file():
            from grader.problem.cases import case_from_json

            for entry in json.loads(path.read_text()):
                args = case_from_json(problem, entry["args"])
                digest = self.digest(args)
                output = np.asarray(entry["output"], dtype=problem.output_dtype).reshape(-1)
                self.outputs.setdefault(digest, (f"golden.json's {entry['name']!r}", args, output))
                for name, stored in (entry.get("pitfalls") or {}).items():
                    self.pitfalls.setdefault(name, []).append(
                        (stored["source"], digest, np.asarray(stored["output"], dtype=problem.output_dtype)))

    def digest(self, args: dict) -> str:
        return kinds.args_digest(self.problem.args, args)

    def disagreement(self, digest: str, output: np.ndarray) -> str | None:
        """Where the statement or golden.json gives another output than ``output`` (flat) on the input of
        ``digest``; None where neither gives one, or where they agree."""
        if digest not in self.outputs:
            return None
        where, args, expected = self.outputs[digest]
        if output.shape == expected.shape and self.agrees(args, expected, output):
            return None
        return where

    def pitfall_outputs(self, name: str, source: str) -> list[tuple[str, np.ndarray]]:
        """(input digest, output) of the known mistake ``name`` that golden.json keeps from the variant's source
        of key ``source`` (:meth:`grader.grading.sources.TrustedSources.variant_source_key`): those of an
        earlier source are not its outputs any more."""
        return [(digest, output) for found, digest, output in self.pitfalls.get(name, []) if found == source]

    def agrees(self, args: dict, expected: np.ndarray, got: np.ndarray) -> bool:
        """Whether ``got`` is an acceptable answer where ``expected`` is the reference's (both flat)."""
        return agrees(self.problem, args, expected, got, self.accept_also(args, expected))

    def accept_also(self, args: dict, expected: np.ndarray) -> np.ndarray | None:
        hook = getattr(self.hooks, "accept_also", None)
        return None if hook is None else hook(args, expected)
