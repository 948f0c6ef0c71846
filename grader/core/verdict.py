"""The vocabulary of a verdict: statuses, checks, what happened on one input, and the verdict itself.

The report (:mod:`grader.render.report`) turns a :class:`Verdict` into text and into the one JSON object
whose schema it defines; nothing else needs to know how a verdict is written out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from grader.core.compare import Comparison

# The line the engine writes between what the learner's two processes printed (Verdict.output): the
# grader's, not the learner's. A report's reader leaves it out where only the learner's printing is shown.
SECOND_PROCESS = "[printed by a second process, which ran your file on some of the inputs]"


class Status(str, Enum):
    """The verdict of a run (and of one check; a check may also only warn)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    TIMEOUT = "timeout"
    NOT_STARTED = "not_started"
    WARN = "warn"  # checks only: worth saying, changes no verdict

    def __str__(self) -> str:
        return self.value


class Isolation(str, Enum):
    """How learner code was confined: in namespaces; as an unprivileged user of its own (the kernel refused
    namespaces, and root's grader ran it so); not at all (also when no code ran)."""

    NAMESPACES = "namespaces"
    USER = "user"
    NONE = "none"

    def __str__(self) -> str:
        return self.value


class CheckKind(str, Enum):
    """What a check is: a phase of the run (loading the file, the fixed examples, the generated inputs), or
    a property of the problem's output that the learner's answer was checked for."""

    PHASE = "phase"
    PROPERTY = "property"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Check:
    """One line of the verdict's list of checks: a phase of the run, or a property checked."""

    name: str
    status: Status
    message: str
    kind: CheckKind = CheckKind.PHASE


@dataclass(frozen=True)
class Pitfall:
    """A known mistake the learner's outputs match."""

    id: str
    message: str


@dataclass(frozen=True)
class Diagnosis:
    """What the relation between the expected and the actual output says, with no known mistake needed
    (a constant factor, reduced precision, a permutation, NaN where the input is all zeros, ...)."""

    id: str
    message: str


@dataclass(frozen=True)
class Part:
    """The first module of a model, in execution order, whose output differs when it runs alone on the
    reference's parameters and inputs: its path in the module tree and what was seen."""

    path: str  # e.g. "decoder_0/self_attn"
    message: str  # one sentence: the module's class, what it was called with, how its output differs
    details: list[str] = field(default_factory=list)  # further lines for the text report (a grid)
    diagnosis: Diagnosis | None = None  # what its output says beyond the difference (its values in another layout)
    # Its outputs, whole, for a figure (grader.render.figures): the reference's, the learner's (None where
    # no array came back) and which of the learner's values are wrong (None where the shapes differ).
    expected: np.ndarray | None = field(default=None, compare=False, repr=False)
    actual: np.ndarray | None = field(default=None, compare=False, repr=False)
    mismatch: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass
class Outcome:
    """What happened on one input."""

    name: str
    args: dict
    status: Status
    message: str
    comparison: Comparison | None = None
    error: dict | None = None  # the worker's description of an exception (validated)
    actual: np.ndarray | None = None  # the learner's flat output, when an array came back


@dataclass
class Verdict:
    problem: str
    status: Status
    message: str
    isolation: Isolation = Isolation.NONE
    checks: list[Check] = field(default_factory=list)
    counterexample: Outcome | None = None
    pitfall: Pitfall | None = None
    examples_run: int = 0
    duration_s: float = 0.0
    output: str = ""
    params_diff: list[str] = field(default_factory=list)
    diagnosis: Diagnosis | None = None
    first_wrong_part: Part | None = None
    pitfall_candidates: list[str] = field(default_factory=list)  # known mistakes that remained, none named
