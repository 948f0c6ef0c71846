"""How a worker answers a batch (grader.sandbox.worker.batch), run in this process: calls of a cheap program
are traced together, calls of an expensive one run one by one, and what a program costs is what its
first call in this worker took, not what a later first call of a batch takes once it is compiled."""

from __future__ import annotations

import numpy as np
import pytest

from grader.core import kinds
from grader.sandbox import worker

ARGS = {"x": "array:float32", "n": "int"}


@pytest.fixture
def entry():
    worker.STATE["graded"] = {"fn": lambda x, n: x * n, "path": "graded.py", "module": None, "jitted": {},
                              "jit_error": None, "moves": False, "costs": {}}
    yield worker.STATE["graded"]
    del worker.STATE["graded"]


def batch(cases: list[dict]) -> list[dict]:
    arrays: list = []
    calls = [{"args": kinds.encode(ARGS, args, arrays), "moved": False, "max_bytes": 4096} for args in cases]
    return [reply for reply, _ in worker.batch({"key": "graded", "calls": calls, "jit": True}, arrays)]


CASES = [{"x": np.full(3, k, np.float32), "n": 2} for k in range(4)]


def test_the_calls_of_a_cheap_program_are_traced_together(entry):
    replies = batch(CASES)
    assert [r.get("together", False) for r in replies] == [False, True, True, True]
    assert [r["result"]["shape"] for r in replies] == [[3]] * 4


def test_a_program_compiled_earlier_at_a_high_cost_keeps_its_calls_one_by_one(entry):
    batch(CASES[:1])  # compiled here: its cost is what that first call took
    (key,) = entry["costs"]
    entry["costs"][key] = 5.0  # as a model's program costs: tracing its calls together would cost more
    replies = batch(CASES)
    assert [r.get("together", False) for r in replies] == [False] * 4
    assert replies[0]["seconds"] < 5.0  # the first call itself is quick now: the cost kept is the compile's
