"""What the reference is asked besides its outputs (:mod:`grader.grading.probes`), with its worker faked in this
process: recorded module calls and initial parameter values kept on disk, and the substituted run's failure."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from conftest import ROOT
from grader.grading import probes
from grader.grading.errors import ReferenceError
from grader.grading.sources import TrustedSources
from grader.problem import problems
from grader.sandbox.operations import Recorded, Tree
from trusted_fakes import error, returned

PROBLEM = problems.load(ROOT, "rmsnorm")


class Asked:
    """A trusted worker that answers each request with the next of ``replies`` and records the requests."""

    def __init__(self, *replies):
        self.replies, self.requests = list(replies), []

    def start(self):
        return SimpleNamespace(request=lambda header, arrays: self.requests.append(header))

    def receive(self, timeout: float, max_bytes: int, expect: str):
        return self.replies.pop(0)


def example(i: int = 0) -> dict:
    return PROBLEM.examples[i].args


def calls(count: int) -> Recorded:
    return Recorded("capture", calls=[{"path": "x"}], arrays=[np.arange(3.0)] * count)


def test_recorded_calls_are_kept_by_input_and_read_back_in_a_later_run(tmp_path):
    worker = Asked(calls(2))
    made = probes.CapturedCalls(PROBLEM, tmp_path, TrustedSources(PROBLEM, None), worker)
    first = made.capture(example())
    assert made.capture(example()) == first and len(worker.requests) == 1
    made.save()
    later = probes.CapturedCalls(PROBLEM, tmp_path, TrustedSources(PROBLEM, None), Asked())
    found, arrays = later.capture(example())
    assert found == [{"path": "x"}] and len(arrays) == 2 and np.array_equal(arrays[1], np.arange(3.0))


def test_the_calls_of_the_latest_few_inputs_are_kept():
    worker = Asked(*[calls(1) for _ in range(probes.CALLS_KEPT + 2)])
    made = probes.CapturedCalls(PROBLEM, None, TrustedSources(PROBLEM, None), worker)
    inputs = [dict(example(), seed=seed) for seed in range(probes.CALLS_KEPT + 1)]
    for args in inputs:
        made.capture(args)
    assert sum(key.endswith("-calls") for key in made.cache.entries) == 1  # room made for the last
    made.capture(inputs[0])
    assert len(worker.requests) == probes.CALLS_KEPT + 2


def test_a_reference_that_raises_while_recorded_is_a_broken_problem():
    made = probes.CapturedCalls(PROBLEM, None, TrustedSources(PROBLEM, None), Asked(error()))
    with pytest.raises(ReferenceError, match="while its module calls were recorded on rmsnorm"):
        made.capture(example())


def test_initial_values_are_kept_by_signature_and_none_where_the_reference_creates_none(tmp_path):
    values = {"params/scale": np.ones(4, np.float32)}
    worker = Asked(Tree("params", params={"params/scale": [4]}, values=values))
    made = probes.ParameterValues(PROBLEM, tmp_path, TrustedSources(PROBLEM, None), worker)
    assert made.initial(example()).keys() == values.keys()
    assert made.initial(example()) is not None and len(worker.requests) == 1  # kept: nothing asked again
    none = probes.ParameterValues(PROBLEM, None, TrustedSources(PROBLEM, None), Asked(Tree("params")))
    assert none.initial(example()) is None


def test_a_substituted_run_that_raises_gives_nothing_and_one_that_returns_its_flat_output():
    values = {"params/scale": np.ones(4, np.float32)}
    output = np.ones((2, 4), np.float32)
    made = probes.ParameterValues(PROBLEM, None, TrustedSources(PROBLEM, None), Asked(error(), returned(output)))
    assert made.substituted(example(), values) is None
    assert np.array_equal(made.substituted(example(), values), output.reshape(-1))
    assert made.worker.requests[0]["paths"] == ["params/scale"]
