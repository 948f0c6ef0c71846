"""What a run asks of the trusted side (:class:`grader.grading.trusted.Trusted`), with its worker's process faked
in this process (:mod:`trusted_fakes`): outputs kept or computed in one batch, a variant's failure told from
the reference's, and a second worker for the known mistakes where a core is idle. The real worker is
exercised by tests/grading/test_regrade.py and tests/sandbox/test_trust.py."""

from __future__ import annotations

import numpy as np
import pytest

from grader.grading import trusted_worker
from grader.grading.errors import ReferenceError, TrustedFailure
from grader.grading.trusted import Trusted
from grader.sandbox.pool import WorkerFailure
from trusted_fakes import CASES, PROBLEM, FakeProcess, reference


def raises_on_seed_1(args: dict) -> np.ndarray:
    if args["seed"] == 1:
        raise ValueError("seed 1")
    return reference(args) + 1


OUTPUTS = {"reference": reference, "variant": raises_on_seed_1, **{f"pitfall_{i}": reference for i in range(5)}}


@pytest.fixture
def processes(monkeypatch) -> list[FakeProcess]:
    """The processes the trusted side starts, in order (each answers as OUTPUTS says)."""
    started: list[FakeProcess] = []

    def start(spec, zygote):
        started.append(FakeProcess(OUTPUTS))
        return started[-1]

    monkeypatch.setattr(trusted_worker, "Worker", start)
    return started


@pytest.fixture
def trusted(processes):
    made = Trusted(PROBLEM, use_cache=False)
    assert not any(made.digest(a) in made.known.outputs for a in CASES)  # the statement says nothing of these
    made.register({key: PROBLEM.reference for key in OUTPUTS if key != "reference"})
    return made


def test_outputs_are_computed_in_one_batch_and_then_kept(trusted, processes):
    first = trusted.outputs("reference", CASES)
    assert all(np.array_equal(out, reference(a).reshape(-1)) for out, a in zip(first, CASES))
    assert processes[0].ops().count("batch") == 1
    again = trusted.outputs("reference", CASES)
    assert all(a is b for a, b in zip(first, again)) and processes[0].ops().count("batch") == 1


def test_a_variant_that_raises_gives_no_output_there_and_the_rest_still_come(trusted):
    outputs = trusted.outputs("variant", CASES)
    assert outputs[1] is None and all(out is not None for i, out in enumerate(outputs) if i != 1)


def test_the_reference_that_raises_or_a_worker_that_fails_is_a_broken_problem(trusted, processes, monkeypatch):
    monkeypatch.setitem(OUTPUTS, "reference", raises_on_seed_1)
    with pytest.raises(ReferenceError, match=r"raised ValueError: seed 1, line 3 on t5_relative_pos\(seed=1"):
        trusted.outputs("reference", CASES)
    trusted.request("variant", CASES[0])
    processes[0].failure = WorkerFailure("crash", "it died")
    with pytest.raises(TrustedFailure):
        trusted.outputs("variant", CASES[:1])


def test_a_reference_output_of_another_shape_than_problem_toml_says_is_a_broken_problem(trusted, monkeypatch):
    monkeypatch.setitem(OUTPUTS, "reference", lambda args: np.zeros(3, np.float32))
    with pytest.raises(ReferenceError, match="problem.toml says float32 of shape"):
        trusted.output("reference", CASES[0])


@pytest.mark.parametrize("share, processes_started", [(False, 1), (True, 2)])
def test_several_known_mistakes_on_one_input_go_to_a_second_worker_only_where_a_core_is_idle(
        trusted, processes, share, processes_started):
    keys = [f"pitfall_{i}" for i in range(5)]
    trusted.limit(123.0)
    outputs = trusted.outputs_on(keys, CASES[0], share=share)
    assert all(np.array_equal(out, reference(CASES[0]).reshape(-1)) for out in outputs.values())
    assert len(processes) == processes_started
    calls = [[r["key"] for r in p.requests if r["op"] == "call"] for p in processes]
    assert calls == ([keys] if not share else [keys[::2], keys[1::2]])
    if share:
        assert trusted.twin.deadline == 123.0
        trusted.limit(None)
        assert trusted.twin.deadline is None


def test_closing_ends_both_workers_and_keeps_what_they_computed(trusted, processes):
    trusted.outputs_on([f"pitfall_{i}" for i in range(5)], CASES[0], share=True)
    trusted.close()
    assert all(p.closed for p in processes) and trusted.twin is None
    assert trusted.cached("pitfall_1", CASES[0]) is not None  # computed by the second worker, kept by both


def test_outputs_all_kept_start_no_worker(trusted, processes):
    for args in CASES:
        trusted.caches["reference", True].put(trusted.digest(args), reference(args).reshape(-1))
    trusted.outputs("reference", CASES)
    trusted.prefetch("reference", CASES)
    assert processes == []
