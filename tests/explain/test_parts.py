"""grader.explain.parts, the grader's half of "the first wrong part", on a recorded trace written by hand and a
fake session: how a recorded argument reads, how a part's output differs, and which part is named first.

The trace is a tiny model, ``Model(x) = Block(Block(x))`` with ``Block(x) = Scale(x) + 1`` and
``Scale(x) = x * w``, recorded as :mod:`grader.sandbox.intercept` records it (every value its own array, the
calls in the order they finish). The fake learner computes each class from the arrays it is sent.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from grader.core.verdict import Part, Status
from grader.explain import parts
from grader.problem.problems import ProblemError
from grader.sandbox.pool import WorkerFailure
from grader.sandbox.operations import Result, Returned

ATOL, RTOL = 1e-6, 1e-5
PROBLEM = SimpleNamespace(slug="tiny_model", atol=ATOL, rtol=RTOL, part_names=lambda: ["Scale", "Block", "Model"],
                          hooks=lambda: None)


def array_reply(out) -> Returned:
    out = np.asarray(out)
    return Returned("part", result=Result("array", out.dtype.name, tuple(out.shape), out))


def error_reply(kind="exception", type_="ValueError", message="boom") -> Returned:
    return Returned("part", ok=False, error={"kind": kind, "type": type_, "message": message, "file": None, "line": None,
                                    "during": "call", "traceback": ""})


def trace(x, w0, w1):
    """The recorded calls of the tiny model on ``x``, and their arrays."""
    arrays: list = []

    def enc(value):
        arrays.append(np.array(value))
        return {"array": len(arrays) - 1}

    def call(path, cls, x, variables, out):
        return {"path": path, "cls": cls, "fields": {}, "names": ["x"], "args": [enc(x)], "kwargs": {},
                "variables": {k: enc(v) for k, v in variables.items()}, "output": enc(out)}

    s0 = x * w0
    b0 = s0 + 1
    s1 = b0 * w1
    b1 = s1 + 1
    calls = [call("block_0/scale", "Scale", x, {"params/w": w0}, s0),
             call("block_0", "Block", x, {"params/scale/w": w0}, b0),
             call("block_1/scale", "Scale", b0, {"params/w": w1}, s1),
             call("block_1", "Block", b0, {"params/scale/w": w1}, b1),
             call("", "Model", x, {"params/block_0/scale/w": w0, "params/block_1/scale/w": w1}, b1)]
    return calls, arrays


RNG = np.random.default_rng(0)
X, W0, W1 = (RNG.normal(size=s).astype(np.float32) for s in ((2, 3), (3,), (3,)))
CALLS, ARRAYS = trace(X, W0, W1)


def learner(scale=lambda x, w: x * w, shift=1.0, fail=None):
    """A learner's classes, answering a ``part`` request from the arrays sent (``fail``: a class whose every
    call raises WorkerFailure)."""
    def answer(header, arrays):
        if header["cls"] == fail:
            raise WorkerFailure("crash", "the worker died")
        var = lambda path: arrays[header["variables"][path]["array"]]  # noqa: E731
        x = arrays[header["args"][0]["array"]]
        block = lambda x, prefix: scale(x, var(prefix + "scale/w")) + shift  # noqa: E731
        if header["cls"] == "Scale":
            return array_reply(scale(x, var("params/w")))
        if header["cls"] == "Block":
            return array_reply(block(x, "params/"))
        return array_reply(block(block(x, "params/block_0/"), "params/block_1/"))
    return answer


class FakeWorkers:
    """The learner's workers as parts.py asks of them: ``answer(header, arrays)`` answers each request."""

    def __init__(self, session):
        self.session = session

    def ask(self, request):
        self.session.events.append("request")
        self.session.requests.append(tuple(request))

    def receive(self, max_bytes, expect):
        header, arrays = self.session.requests[-1]
        assert max_bytes == header["max_bytes"] and expect == header["op"]
        return self.session.answer(header, arrays)

    def ready(self):
        self.session.events.append("ready")

    def failure_outcome(self, name, args, failure):
        return SimpleNamespace(status=Status.ERROR, message=f"{name}: {failure.message}")


class FakeSession:
    """What parts.py asks of a grading session, and no worker: the trusted worker's capture replays the
    trace; the learner's worker answers with ``answer(header, arrays)``."""

    key = "learner-key"

    def __init__(self, answer, problem=PROBLEM, shared=False, calls=CALLS, arrays=ARRAYS):
        self.problem, self.shared, self.answer = problem, shared, answer
        self.requests: list = []
        self.events: list = []
        self.captured: list = []
        self.trusted = SimpleNamespace(capture=self._capture)
        self.workers = FakeWorkers(self)
        self.trace = calls, arrays

    def _capture(self, args):
        self.captured.append(args)
        return self.trace


# ------------------------------------------------------------------------------------------ describe_value


def test_describe_value_names_scalars_arrays_and_the_masks_it_knows():
    arrays = [np.zeros((4, 8), np.float32), np.ones((3, 3), bool), np.tril(np.ones((3, 3), bool)),
              np.triu(np.ones((3, 3), bool)), np.ones((2, 3, 3), bool), np.tril(np.ones((2, 4), bool))]
    assert parts.describe_value("eps", {"value": 0.01}, arrays) == "eps=0.01"
    assert parts.describe_value("name", {"value": "enc"}, arrays) == "name='enc'"
    assert parts.describe_value("flag", {"value": None}, arrays) == "flag=None"
    assert parts.describe_value("x", {"array": 0}, arrays) == "x (4, 8) float32"
    assert parts.describe_value("mask", {"array": 1}, arrays) == "mask (3, 3) bool, all True"
    assert parts.describe_value("mask", {"array": 2}, arrays) == "mask (3, 3) bool, causal (True where j <= i)"
    assert parts.describe_value("mask", {"array": 3}, arrays) == "mask (3, 3) bool"  # the transpose is not causal
    assert parts.describe_value("mask", {"array": 4}, arrays) == "mask (2, 3, 3) bool"  # only 2-D masks are read
    assert parts.describe_value("mask", {"array": 5}, arrays) == "mask (2, 4) bool, causal (True where j <= i)"


def test_call_text_names_positional_arguments_unnamed_ones_and_keywords():
    arrays = [np.zeros((2, 3), np.float32), np.tril(np.ones((3, 3), bool))]
    call = {"names": ["x"], "args": [{"array": 0}, {"value": 2}], "kwargs": {"mask": {"array": 1}}}
    assert parts.call_text(call, arrays) == "x (2, 3) float32, arg1=2, mask (3, 3) bool, causal (True where j <= i)"


def test_where_names_the_top_level_module_by_its_class():
    assert parts.where({"path": "block_0/scale", "cls": "Scale"}) == "block_0/scale"
    assert parts.where({"path": "", "cls": "Model"}) == "the top-level Model"


# ------------------------------------------------------------------------------------------------ run_call


def test_run_call_sends_only_the_arrays_the_call_reads_renumbered():
    arrays = [np.full(k + 1, k, np.float32) for k in range(6)]
    call = {"path": "p", "cls": "Block", "fields": {"scale": 0.5}, "names": ["x", "n"],
            "args": [{"array": 4}, {"value": 2}], "kwargs": {"mask": {"array": 1}},
            "variables": {"params/w": {"array": 3}}, "output": {"array": 5}}
    marker = array_reply(np.zeros(6))
    session = FakeSession(lambda header, arrays: marker)
    assert parts.run_call(session, call, arrays) is marker
    assert session.events == ["request"]
    (header, sent), = session.requests
    assert [a is b for a, b in zip(sent, (arrays[1], arrays[3], arrays[4]))] == [True] * 3 and len(sent) == 3
    assert header == {"op": "part", "key": "learner-key", "cls": "Block", "method": None, "function": False,
                      "fields": {"scale": 0.5},
                      "args": [{"array": 2}, {"value": 2}], "kwargs": {"mask": {"array": 0}},
                      "variables": {"params/w": {"array": 1}}, "max_bytes": 16 * 6 + 4096}


# ---------------------------------------------------------------------------------------------- difference


def differs(expected, reply, problem=PROBLEM):
    arrays = [np.asarray(expected)]
    call = {"path": "p", "cls": "Scale", "fields": {}, "names": ["x"], "args": [], "kwargs": {}, "variables": {},
            "output": {"array": 0}}
    return parts.difference(SimpleNamespace(problem=problem), call, arrays, reply)


def test_an_output_within_the_problems_tolerance_agrees_and_one_beyond_it_differs():
    expected = np.array([[1.0, -2.0], [0.0, 4.0]], np.float32)
    slack = ATOL + RTOL * np.abs(expected)
    assert differs(expected, array_reply(expected)) is None
    assert differs(expected, array_reply(expected + 0.5 * slack)) is None
    off = expected.copy()
    off[1, 0] += 2 * slack[1, 0]
    sentence, details = differs(expected, array_reply(off))
    assert sentence.startswith("1 of 4 values of its output differ, the worst at (1, 0): expected 0, got 2e-06")
    assert details == ["row 1, expected: [0 4]", "row 1, yours:    [2e-06 4]"]


def test_a_problem_s_canonical_part_hook_decides_what_agrees_and_the_report_shows_the_values_as_returned():
    """solutions/<slug>/grading.py's canonical_part: outputs alike in its terms agree (here, rows that differ
    by a constant); others differ, and the report shows the part's own values, not the hook's."""
    rows = SimpleNamespace(canonical_part=lambda name, out: out - out[:, :1] if name == "Scale" else out)
    problem = SimpleNamespace(**{**vars(PROBLEM), "hooks": lambda: rows})
    expected = np.array([[1.0, 2.0], [0.0, 4.0]], np.float32)
    assert differs(expected, array_reply(expected + np.array([[5.0], [-1.0]], np.float32)), problem) is None
    sentence, details = differs(expected, array_reply(expected * 2), problem)
    assert sentence.startswith("2 of 4 values of its output differ, the worst at (1, 1): expected 4, got 8")
    assert details == ["row 1, expected: [0 4]", "row 1, yours:    [0 8]"]
    assert differs(expected, array_reply(expected + 1.0)) is not None  # without the hook: compared as they are


def test_the_worst_value_is_the_farthest_and_nan_is_worst_of_all():
    expected = np.zeros((2, 3), np.float32)
    actual = expected.copy()
    actual[0, 1], actual[1, 2] = 5.0, 0.5
    assert "2 of 6 values" in differs(expected, array_reply(actual))[0]
    assert "worst at (0, 1): expected 0, got 5" in differs(expected, array_reply(actual))[0]
    actual[1, 0] = np.nan
    sentence, details = differs(expected, array_reply(actual))
    assert "3 of 6 values" in sentence and "worst at (1, 0): expected 0, got nan" in sentence
    assert details[0].startswith("row 1, expected:")


def test_a_long_row_shows_its_first_values_and_a_vector_is_the_output():
    expected = np.arange(12, dtype=np.float32)
    actual = expected.copy()
    actual[3] = -1
    sentence, details = differs(expected, array_reply(actual))
    assert "worst at (3,): expected 3, got -1" in sentence
    assert details == ["output, expected: [0 1 2 3 4 5 6 7] (first 8 of 12)",
                       "output, yours:    [0 1 2 -1 4 5 6 7] (first 8 of 12)"]
    sentence, details = differs(np.float32(2.0), array_reply(np.float32(3.0)))  # a scalar: no row to show
    assert "1 of 1 values" in sentence and details == []


@pytest.mark.parametrize("reply, sentence", [
    (error_reply(), "it raised ValueError in your function: boom (your file)"),
    (Returned("part", result=Result("tuple")), "it returned a value of type tuple, not an array"),
    (array_reply(np.zeros((3, 2), np.float32)), "it returned shape (3, 2), expected (2, 3)"),
])
def test_an_output_that_cannot_be_compared_says_why(reply, sentence):
    assert differs(np.zeros((2, 3), np.float32), reply) == (sentence, [])


@pytest.mark.parametrize("dtype, shape, says", [("float32", (64, 64), "it returned shape (64, 64), expected (2, 3)"),
                                                 ("bfloat16", (2, 3), "an array of dtype bfloat16 (shape (2, 3))")])
def test_an_array_whose_bytes_did_not_come_back_is_not_called_no_array(dtype, shape, says):
    sentence, _ = differs(np.zeros((2, 3), np.float32), Returned("part", result=Result("array", dtype, shape)))
    assert "not an array" not in sentence and says in sentence


def test_infinities_where_the_reference_has_them_agree():
    expected = np.array([[0.0, -np.inf], [1.0, 2.0]], np.float32)  # a masked score, as an attention part gives
    assert differs(expected, array_reply(expected.copy())) is None
    flipped = expected.copy()
    flipped[0, 1] = np.inf
    assert differs(expected, array_reply(flipped))[0].startswith("1 of 4 values of its output differ")


# ---------------------------------------------------------------------------------------------- wrong_part


def test_wrong_part_says_which_class_on_what_inputs_and_how():
    call = CALLS[1]
    session = FakeSession(learner())
    assert parts.wrong_part(session, call, ARRAYS, array_reply(ARRAYS[call["output"]["array"]])) is None
    part = parts.wrong_part(session, call, ARRAYS, error_reply())
    assert part == Part("block_0", "your Block, run alone on the reference's parameters and on the inputs the "
                                   "reference gave it (x (2, 3) float32): it raised ValueError in your function: "
                                   "boom (your file).", [])


def test_layout_finds_the_right_values_with_axes_swapped_or_a_size_one_axis_left_out_or_added():
    e = np.arange(30.0).reshape(1, 2, 3, 5)
    tol = dict(rtol=RTOL, atol=ATOL)
    assert parts.layout(e, e.transpose(0, 1, 3, 2), **tol) == \
        "axes 2 and 3 swapped (shape (1, 2, 5, 3) where (1, 2, 3, 5) is expected)"
    assert parts.layout(e, e[0], **tol) == "an axis of size 1 left out (shape (2, 3, 5) where (1, 2, 3, 5) is expected)"
    assert parts.layout(e, e[None], **tol) == "an axis of size 1 added (shape (1, 1, 2, 3, 5) where (1, 2, 3, 5) is expected)"
    assert parts.layout(e, e[0].transpose(2, 0, 1), **tol).startswith(
        "the axes of size above 1 in another order (1, 2, 0) and an axis of size 1 left out")
    assert parts.layout(e, e.reshape(1, 2, 5, 3), **tol) is None  # the same sizes, but not the values moved
    assert parts.layout(e, e.transpose(0, 1, 3, 2) + 1, **tol) is None  # the axes moved, and other values
    assert parts.layout(e, e.reshape(6, 5), **tol) is None  # other sizes


def test_a_part_whose_right_values_come_in_another_layout_carries_that_as_its_diagnosis():
    call = CALLS[1]
    expected = ARRAYS[call["output"]["array"]]
    part = parts.wrong_part(FakeSession(learner()), call, ARRAYS, array_reply(expected.T))
    assert part.message.endswith(f"it returned shape {expected.T.shape}, expected {expected.shape}.")
    assert part.diagnosis.id == "values_rearranged"
    assert part.diagnosis.message == ("Your Block computes the right values in another layout: axes 0 and 1 "
                                      "swapped (shape (3, 2) where (2, 3) is expected).")
    assert parts.wrong_part(FakeSession(learner()), call, ARRAYS, array_reply(expected.T + 1)).diagnosis is None


# ------------------------------------------------------------------------------------------ first_wrong_part


def test_when_every_part_agrees_there_is_none_and_every_call_was_run():
    session = FakeSession(learner())
    assert parts.first_wrong_part(session, {"x": X}, "grade") is None
    assert [h["cls"] for h, _ in session.requests] == ["Scale", "Block", "Scale", "Block", "Model"]
    assert len(session.captured) == 1 and session.captured[0]["x"] is X


def test_a_wrong_inner_module_is_named_before_the_block_that_calls_it():
    # The learner's Scale doubles: block_0/scale differs, and so does block_0 (it calls Scale) and every
    # later call. The first call to finish is the one named, and nothing after it runs.
    session = FakeSession(learner(scale=lambda x, w: 2 * x * w))
    part = parts.first_wrong_part(session, {"x": X}, "python -m grader")
    assert part.path == "block_0/scale"
    assert part.message.startswith("your Scale, run alone on the reference's parameters")
    assert part.message.endswith(" Every part that runs before it agrees.")
    assert part.details[-1] == "Check this part alone: python -m grader tiny_model --part Scale"
    assert part.details[0].startswith("row ") and len(part.details) == 3
    assert len(session.requests) == 1


def test_a_block_is_named_when_the_modules_it_calls_are_right():
    session = FakeSession(learner(shift=2.0))  # Scale right, Block adds 2 where the reference adds 1
    part = parts.first_wrong_part(session, {"x": X}, "grade")
    assert part.path == "block_0" and "your Block" in part.message
    assert part.details[-1] == "Check this part alone: grade tiny_model --part Block"
    assert [h["cls"] for h, _ in session.requests] == ["Scale", "Block"]


def test_a_wrong_wiring_of_right_parts_is_the_top_level_module():
    right = learner()

    def answer(header, arrays):
        if header["cls"] != "Model":
            return right(header, arrays)
        x, w1 = (arrays[e["array"]] for e in (header["args"][0], header["variables"]["params/block_1/scale/w"]))
        return array_reply(x * w1 + 1)  # every block right, but the model applies block_1 alone

    part = parts.first_wrong_part(FakeSession(answer), {"x": X}, "grade")
    assert part.path == "" and part.message.startswith("your Model,")


# A helper function the stub asks for (the bucketing in the attention katas) is a part too: its recorded call
# (``function``: no variables) finishes before the module that calls it.
HELPER_CALL = {"path": "offsets", "cls": "offsets", "function": True, "fields": {}, "names": ["x"],
               "args": [{"array": 0}], "kwargs": {}, "variables": {}, "output": {"array": 0}}
ONE_CLASS = SimpleNamespace(**{**vars(PROBLEM), "part_names": lambda: ["Model", "offsets"]})


def helper_then(answer_helper, answer_rest):
    def answer(header, arrays):
        return answer_helper(header, arrays) if header["function"] else answer_rest(header, arrays)
    return answer


def test_a_wrong_helper_function_is_named_first_and_said_to_run_on_no_parameters():
    session = FakeSession(helper_then(lambda h, a: array_reply(a[0] + 1), learner(shift=2.0)), problem=ONE_CLASS,
                          calls=[HELPER_CALL] + CALLS)
    part = parts.first_wrong_part(session, {"x": X}, "grade")
    assert part.path == "offsets" and part.message.startswith("your offsets, run alone on the inputs the "
                                                              "reference gave it (x (2, 3) float32): ")
    assert part.details[-1] == "Check this part alone: grade tiny_model --part offsets"
    assert session.requests[0][0]["function"] is True and session.requests[0][0]["variables"] == {}


def test_a_helper_the_learner_left_unwritten_is_passed_over_not_named():
    # The learner computed the offsets inside a module and left the stub's helper raising NotImplementedError.
    session = FakeSession(helper_then(lambda h, a: error_reply("not_implemented", "NotImplementedError", ""),
                                      learner(shift=2.0)), problem=ONE_CLASS, calls=[HELPER_CALL] + CALLS)
    part = parts.first_wrong_part(session, {"x": X}, "grade")
    assert part.path == "block_0" and [h["cls"] for h, _ in session.requests] == ["offsets", "Scale", "Block"]


# A step of a layer the stub asks for as a method (``Model.double``) is a part too, recorded with the module's
# variables and its method's name; it finishes before the module whose __call__ calls it.
STEP_CALL = {"path": "double", "cls": "Model", "method": "double", "fields": {}, "names": ["y"],
             "args": [{"array": 0}], "kwargs": {}, "variables": {}, "output": {"array": 0}}


def step_then(answer_step, answer_rest):
    def answer(header, arrays):
        return answer_step(header, arrays) if header["method"] else answer_rest(header, arrays)
    return answer


def test_a_wrong_step_is_named_by_its_method_and_checked_alone_by_that_name():
    session = FakeSession(step_then(lambda h, a: array_reply(a[0] * 3), learner(shift=2.0)), problem=ONE_CLASS,
                          calls=[STEP_CALL] + CALLS)
    part = parts.first_wrong_part(session, {"x": X}, "grade")
    assert part.path == "double" and part.message.startswith("your Model.double, run alone on the reference's "
                                                             "parameters and on the inputs the reference gave it")
    assert part.details[-1] == "Check this part alone: grade tiny_model --part Model.double"
    assert session.requests[0][0]["method"] == "double"


def test_a_step_the_learner_left_unwritten_is_passed_over_not_named():
    # The learner wrote the whole layer in __call__ and left the stub's step raising NotImplementedError.
    session = FakeSession(step_then(lambda h, a: error_reply("not_implemented", "NotImplementedError", ""),
                                    learner(shift=2.0)), problem=ONE_CLASS, calls=[STEP_CALL] + CALLS)
    part = parts.first_wrong_part(session, {"x": X}, "grade")
    assert part.path == "block_0" and [h["method"] for h, _ in session.requests] == ["double", None, None]


@pytest.mark.parametrize("session", [
    FakeSession(learner(shift=2.0), problem=SimpleNamespace(**{**vars(PROBLEM), "part_names": lambda: ["Block"]})),
    FakeSession(learner(shift=2.0), shared=True),  # a trusted module graded in the trusted worker
], ids=["one part", "shared worker"])
def test_no_part_is_looked_for_with_one_part_or_a_shared_worker(session):
    assert parts.first_wrong_part(session, {"x": X}, "grade") is None
    assert session.captured == [] and session.requests == []


def test_a_worker_that_fails_meanwhile_names_no_part():
    session = FakeSession(learner(shift=2.0, fail="Block"))
    assert parts.first_wrong_part(session, {"x": X}, "grade") is None
    assert [h["cls"] for h, _ in session.requests] == ["Scale", "Block"]


# ---------------------------------------------------------------------------------------------- grade_part


PART_PROBLEM = SimpleNamespace(**vars(PROBLEM), examples=[SimpleNamespace(args={"x": X})])


class PartSession(FakeSession):
    """A fake of engine.Session for grade_part: loads nothing, draws nothing."""

    isolation = "none"
    drawn: list = []

    def load(self):
        self.events.append("load")

    def close(self):
        return "printed output"


@pytest.fixture
def grade_part(monkeypatch):
    """``grade_part(answer, name)`` -> (verdict, session): the learner's classes answering as ``answer``
    does, on the problem's one fixed example and one input kept from an earlier draw."""
    from grader.grading import engine

    made = []
    monkeypatch.setattr(engine, "kept_inputs", lambda session: (None, [{"x": X}]))
    monkeypatch.setattr(engine, "draw_inputs", lambda session, path: pytest.fail("the kept inputs are drawn again"))

    def run(answer, name):
        def session_of(problem, learner_path, options, launch=None):
            made.append(PartSession(answer, problem=problem))
            return made[-1]

        monkeypatch.setattr(engine, "Session", session_of)
        return parts.grade_part(PART_PROBLEM, None, name, None), made[-1]

    return run


def test_grade_part_passes_once_every_call_of_that_class_matches(grade_part):
    verdict, session = grade_part(learner(shift=2.0), "Scale")  # a wrong Block does not matter here
    assert verdict.status == Status.PASS and verdict.first_wrong_part is None
    assert verdict.message == "all 4 calls of Scale in the reference's forward pass on 2 model inputs match"
    assert verdict.examples_run == 4 and verdict.output == "printed output"
    assert {h["cls"] for h, _ in session.requests} == {"Scale"} and len(session.captured) == 2


def test_grade_part_fails_at_the_first_call_that_differs(grade_part):
    verdict, session = grade_part(learner(shift=2.0), "Block")
    assert verdict.status == Status.FAIL
    assert verdict.message == "your Block differs from the reference's at block_0"
    assert verdict.first_wrong_part.path == "block_0" and verdict.examples_run == 1


def test_grade_part_says_not_started_while_the_class_raises_not_implemented(grade_part):
    todo = error_reply("not_implemented", "NotImplementedError", "NotImplementedError")  # as the worker says it
    verdict, _ = grade_part(lambda header, arrays: todo, "Block")
    assert verdict.status == Status.NOT_STARTED and verdict.examples_run == 0
    assert verdict.message == "your Block still raises NotImplementedError: fill in its TODO"
    missing = error_reply("not_implemented", "NotImplementedError", "your Block has no method named scale")
    verdict, _ = grade_part(lambda header, arrays: missing, "Block")  # what the worker says is shown
    assert (verdict.status, verdict.message) == (Status.NOT_STARTED, "your Block has no method named scale")
    # once a call of it has run, NotImplementedError is an error of that call like any other
    replies = iter([learner()])
    verdict, _ = grade_part(lambda header, arrays: next(replies, lambda *_: todo)(header, arrays), "Block")
    assert verdict.status == Status.ERROR and verdict.message == "your Block differs from the reference's at block_1"


def test_grade_part_of_a_class_that_raises_is_an_error_and_a_failing_worker_is_told(grade_part):
    verdict, _ = grade_part(lambda header, arrays: error_reply(), "Block")
    assert verdict.status == Status.ERROR and verdict.first_wrong_part.path == "block_0"
    verdict, _ = grade_part(learner(fail="Block"), "Block")
    assert verdict.status == Status.ERROR and verdict.message == "Block alone: the worker died"


def test_grade_part_of_a_class_the_reference_never_calls_is_the_problems_fault(grade_part):
    with pytest.raises(ProblemError, match="makes no call of Attention that can be recorded"):
        grade_part(learner(), "Attention")


def test_a_hidden_score_agrees_however_it_is_written():
    # A step that masks (Transformer-XL's scores): MASK_VALUE in the reference, -inf or -1e9 in the learner's.
    mask_value = np.finfo(np.float32).min
    expected = np.array([[0.5, mask_value], [0.25, 1.0]], np.float32)
    for hidden in (-np.inf, -1e9, mask_value):
        assert differs(expected, array_reply(np.where(expected == mask_value, hidden, expected))) is None
    sentence, _ = differs(expected, array_reply(np.where(expected == mask_value, -1e4, expected)))
    assert sentence.startswith("1 of 4 values")  # not hidden enough to be sure: a score like any other
    sentence, _ = differs(expected, array_reply(np.full((2, 2), -np.inf, np.float32)))
    assert sentence.startswith("3 of 4 values")  # visible keys hidden


def test_heads_says_which_heads_differ_and_whether_they_are_the_reference_s_in_another_order():
    tol = dict(rtol=RTOL, atol=ATOL)
    e = np.random.default_rng(1).normal(size=(3, 4, 5)).astype(np.float32)  # (H, T, T'), heads first
    one = e.copy()
    one[1] += 1
    assert parts.heads(e, one, ~np.isclose(e, one), 3, **tol) == "head 1 of 3 differs; heads 0 and 2 agree"
    two = e.copy()
    two[[0, 2]] *= 2
    assert parts.heads(e, two, ~np.isclose(e, two), 3, **tol) == "heads 0 and 2 of 3 differ; head 1 agrees"
    swapped = e[[1, 0, 2]]
    assert parts.heads(e, swapped, ~np.isclose(e, swapped), 3, **tol) == \
        "heads 0 and 1 of 3 differ; head 2 agrees"  # two heads swapped: the others agree
    rotated = e[[1, 2, 0]]
    assert parts.heads(e, rotated, ~np.isclose(e, rotated), 3, **tol) == (
        "your heads are the reference's in another order: your head 0 is its head 1, your head 1 is its head 2, "
        "your head 2 is its head 0")
    moved = np.moveaxis(e, 0, 1)  # heads second, as Transformer-XL's (L, H, d_head)
    bad = moved + np.where(np.arange(3)[None, :, None] == 2, 1, 0)
    assert parts.heads(moved, bad, ~np.isclose(moved, bad), 3, **tol) == "head 2 of 3 differs; heads 0 and 1 agree"
    # Every head wrong in its own way, an axis of that size twice, one head, a 2-D output: nothing said.
    assert parts.heads(e, e + 1, np.ones(e.shape, bool), 3, **tol) is None
    square = np.zeros((3, 3, 5), np.float32)
    assert parts.heads(square, square + 1, np.ones(square.shape, bool), 3, **tol) is None
    assert parts.heads(e, one, ~np.isclose(e, one), 1, **tol) is None
    assert parts.heads(e[0], one[0], ~np.isclose(e[0], one[0]), 4, **tol) is None
    assert parts.heads(e, one, ~np.isclose(e, one), None, **tol) is None
