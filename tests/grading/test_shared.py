"""`grade check`'s mode (:class:`grader.grading.shared.SharedWorker`): a trusted module graded in the trusted
worker beside the reference, through the same session as a learner's file, with that worker and the reference's
side faked in this process (:mod:`session_fakes`)."""

from __future__ import annotations

import pytest

from grader.core.verdict import Status
from grader.grading.session import Options, Session
from grader.grading.shared import SharedWorker
from grader.sandbox.operations import Tree
from session_fakes import CALL_SECONDS, CASES, PROBLEM, PROBLEM_SECONDS, FakeTrusted, FakeWorker, expected, wrong
from session_fakes import clock  # noqa: F401  (fixture: the test's clock)


class TrustedWithModule(FakeTrusted):
    """The reference's side of `grade check`: one worker (``process``) for the reference and the graded module."""

    def __init__(self, process: FakeWorker, kept=()):
        super().__init__(kept)
        self.process, self.started, self.acknowledged = process, [], 0
        self.trees: dict = {}
        self.asked_of: list[str] = []

    def start(self, modules=None):
        self.started.append(modules)
        return self.process

    def acknowledge(self) -> None:
        self.acknowledged += 1

    def output(self, key: str, args: dict):
        self.request(key, args)
        return self.collect(key, args)

    def outputs(self, key: str, cases: list[dict]):
        self.asked_of.append(key)
        return [expected(a) for a in cases]


@pytest.fixture
def shared(tmp_path, clock):
    """``shared(process, kept=())``: a session grading the trusted module ``pitfall_x`` in ``process``."""
    path = tmp_path / "pitfall_x.py"
    path.write_text("")

    def make(process: FakeWorker, kept=()) -> Session:
        options = Options(call_seconds=CALL_SECONDS, problem_seconds=PROBLEM_SECONDS)
        made = Session(PROBLEM, path, options, trusted=TrustedWithModule(process, kept), subject_key="pitfall_x")
        made.load()
        return made

    return make


def test_the_graded_module_is_loaded_with_the_trusted_worker_and_nothing_is_confined(shared):
    process = FakeWorker()
    s = shared(process)
    assert isinstance(s.workers, SharedWorker) and s.shared and s.launch is None
    assert list(s.trusted.started[0]) == ["pitfall_x"] and s.workers.first is process and process.ops() == []


def test_the_reference_s_batch_is_answered_first_and_the_module_s_calls_go_one_by_one(shared):
    process = FakeWorker(answer=lambda args: wrong(args) if args == CASES[2] else FakeWorker().answer(args))
    s = shared(process)
    s.prefetch(CASES)
    assert s.trusted.batches == [CASES] and not s.trusted.pending  # collected before any call of the module
    assert [s.evaluate("case", a).status for a in CASES] == [Status.PASS, Status.PASS, Status.FAIL, Status.PASS]
    assert process.ops() == ["call"] * 4 and s.trusted.acknowledged == 4


class Recording(FakeWorker):
    """A worker that notes each reply it gives in ``events``, which the reference's side notes its requests in."""

    def __init__(self, events: list[str]):
        super().__init__()
        self.events = events

    def receive(self, *args, **kwargs):
        self.events.append("the module answered")
        return super().receive(*args, **kwargs)


def test_the_reference_is_asked_of_the_one_worker_after_the_module_s_call_has_answered(shared):
    events: list[str] = []
    s = shared(Recording(events))
    s.trusted.request = lambda key, args, jit=True: events.append(f"{key} asked")
    s.trusted.collect = lambda key, args, timeout=300: expected(args)
    assert s.evaluate("case", CASES[0]).status == Status.PASS
    assert events == ["the module answered", "reference asked"]


def test_answers_for_diagnosis_are_the_module_s_kept_outputs(shared):
    s = shared(FakeWorker())
    assert [a.tolist() for a in s.answers(CASES[:2])] == [expected(a).tolist() for a in CASES[:2]]
    assert s.trusted.asked_of == ["pitfall_x"]


def test_its_tree_is_traced_in_the_trusted_worker_and_is_no_worker_s_report(shared):
    process = FakeWorker()
    s = shared(process)
    process.values = Tree("params", params={"params/w": [2, 3]})
    assert s.params_diff(CASES[0]) == []
    assert [r["key"] for r in process.requests if r["op"] == "params"] == ["reference", "pitfall_x"]
    assert s.parameters.tree_report is None and s.tree_contradiction(CASES[0]) is None
    s.params_diff(CASES[0])  # traced once per signature
    assert len([r for r in process.requests if r["op"] == "params"]) == 2


def test_no_values_are_asked_of_either_side_and_nothing_is_marked_killed_or_printed(shared):
    process = FakeWorker()
    s = shared(process)
    s.ask_param_values(CASES[0])
    assert s.param_values() is None and process.ops() == []
    s.workers.mark_output()
    assert s.workers.malformed("forged").kind == "protocol" and not process.killed
    assert s.close() == "" and not process.closed and s.trusted.deadline is None


def test_a_grade_of_it_checks_its_tree_only_where_the_verdict_could_change_and_says_nothing_of_teaching():
    assert SharedWorker.trees_checked_on == (Status.PASS,) and SharedWorker.source is None
