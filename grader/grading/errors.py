"""How the trusted side fails: a broken problem, never a verdict on the learner."""

from __future__ import annotations


class ReferenceError(RuntimeError):
    """A trusted module failed, or the reference disagrees with the statement: the problem is broken."""


class TrustedFailure(ReferenceError):
    """The trusted worker itself failed (it ended, or did not answer), not a module it runs: nothing can be
    said about a module's outputs from it."""


class TrustedTimeout(TrustedFailure):
    """The trusted worker did not answer within the time left to the run."""
