"""Learner code runs in its worker and can say anything there: replies it writes to the worker's answer pipe,
and what it makes the worker report by patching the helpers the worker calls. Each forgery here parses; each
lies. None may end `grade` in a traceback or as a broken problem, none may pass, and the report may say
nothing from a forgery that the outputs do not show.

Each submission is a correct solution (or a known wrong one) with the forgery added, so that a pass or a
claim could only come from the forgery.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import REFERENCE, ROOT
from grader.core.verdict_report import SCHEMA
from grader.grading.engine import MALFORMED_TREE

pytestmark = pytest.mark.grading

FAST = ("--call-time-limit", "4", "--time-limit", "60")

# -- replies written to the worker's pipe -------------------------------------------------------------------

# The function finds the worker's answer pipe on its own stack and writes a reply of its own there, on the
# inputs from FROM_T on (under jax.jit, once per traced signature), before the worker writes the real one, as
# the answer to the operation the worker is serving (its name is on the stack too).
FORGER = REFERENCE["t5_relative_pos"].read_text() + '''
import json, os, struct, sys

_right = t5_relative_pos


def _send(header, payload=b""):
    frame = sys._getframe()
    while "resp_fd" not in frame.f_locals:
        frame = frame.f_back
    head = json.dumps({"op": frame.f_locals["op"], **header}).encode()
    os.write(frame.f_locals["resp_fd"], struct.pack(">I", len(head)) + head + payload)


def t5_relative_pos(seed, T, num_buckets, max_distance):
    if T >= FROM_T:
        _send(dict(FORGED, result=dict(FORGED["result"], shape=[T * T])), PAYLOAD)
    return _right(seed, T, num_buckets, max_distance)
'''
JIT = {"used": True, "error": None}
OMITTED = {"ok": True, "seconds": 0, "jit": JIT, "result": {"type": "array", "dtype": "float32", "omitted": True}}
BFLOAT16 = {"ok": True, "seconds": 0, "jit": JIT, "result": {"type": "array", "dtype": "float32"},
            "arrays": [{"dtype": "bfloat16", "shape": [2], "nbytes": 4}]}  # bytes the grader does not decode


def forger(submission, forged: dict, from_t: int, payload: bytes = b""):
    return submission(FORGER.replace("_right = t5_relative_pos", f"_right = t5_relative_pos\nFORGED = {forged!r}\n"
                                     f"FROM_T = {from_t}\nPAYLOAD = {payload!r}"))


@pytest.mark.parametrize("forged, from_t, payload, said", [
    (OMITTED, 0, b"", "said to be too large to send"),
    (OMITTED, 30, b"", "said to be too large to send"),
    (BFLOAT16, 0, b"\0" * 4, "do not match its description"),
], ids=["an array said omitted, on the first case", "an array said omitted, inside a batch of drawn inputs",
        "a float32 array over bfloat16 bytes"])
def test_a_reply_that_parses_and_lies_is_an_error_on_the_submission(grade_json, submission, forged, from_t, payload,
                                                                   said):
    """The grader needs the bytes of an array of the expected size, and a worker always sends them: a reply
    that says otherwise is malformed, whichever case it answers (a batch's answers are each checked against
    their own call's bound)."""
    code, report = grade_json("t5_relative_pos", "--file", forger(submission, forged, from_t, payload), *FAST)
    assert (code, report["status"]) == (1, "error")
    assert "broke the grader's protocol: it sent a malformed answer" in report["message"] and said in report["message"]
    jsonschema.validate(report, SCHEMA)


def test_a_reply_that_says_its_array_was_omitted_reads_as_a_verdict_not_a_traceback(grade, submission):
    """The text report, as a learner (or Gradescope's page) shows it: a verdict line, no traceback."""
    code, out, err = grade("t5_relative_pos", "--file", forger(submission, OMITTED, 0), *FAST)
    assert code == 1 and out.startswith("t5_relative_pos: ERROR - the process running your code broke")
    assert "Traceback" not in out + err and "not a problem with your code" not in out + err


# -- the parameter tree the worker reports ------------------------------------------------------------------

# rmsnorm with no parameters at all (right while gamma is ones, or wrong everywhere), whose worker reports
# the reference's tree: a gain `gamma` of the input's width.
NO_GAMMA = '''
import jax.numpy as jnp
import grader.sandbox.moved as _moved

_observe, _width = _moved.observe, []


def _forged(call):
    found = _observe(call)
    return found or {"params/gamma": jnp.ones((_width[-1],), jnp.float32)}


_moved.observe = _forged


def rmsnorm(seed, x, eps):
    x = jnp.asarray(x, jnp.float32)
    _width.append(x.shape[-1])
    return (SCALE * x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)).reshape(-1)
'''


@pytest.mark.parametrize("scale", ["1.0", "2.0"], ids=["gamma ignored", "wrong everywhere"])
def test_a_forged_tree_neither_passes_nor_is_said(grade_json, submission, scale):
    """The worker says the tree is the statement's; the code creates no parameter. Its outputs fail (with
    gamma moved, or everywhere), and the report says no more of its tree than the outputs show: not that
    it is the statement's, and, where the output is right at the initial values, that it ignores gamma."""
    code, report = grade_json("rmsnorm", "--file", submission(NO_GAMMA.replace("SCALE", scale), "rmsnorm.py"))
    assert (code, report["status"]) == (1, "fail")
    assert report["params_diff"] == []
    assert not [c for c in report["checks"] if c["name"] == "parameters"]
    assert "the parameter tree is the statement's" not in json.dumps(report)
    if scale == "1.0":
        assert report["diagnosis"]["id"] == "parameters_not_followed"
        assert "your output does not change when `gamma` moves" in report["diagnosis"]["message"]


RENAMED = '''
import grader.sandbox.moved as _moved

_observe = _moved.observe
_moved.observe = lambda call: {k.replace("gamma", "scale"): v for k, v in (_observe(call) or {}).items()}
'''


@pytest.mark.parametrize("forgery, said", [
    ("import grader.sandbox.moved as _moved\n_moved.observe = lambda call: None\n",
     "it reported that your code creates no parameters that Flax makes, yet your output changes"),
    (RENAMED, "it reported no parameter `gamma` in your parameter tree, yet your output changes"),
], ids=["no parameters", "gamma missing"])
def test_a_tree_the_outputs_contradict_is_malformed(grade_json, submission, forgery, said):
    """The reference solution, whose worker reports a tree without gamma: moving gamma changes its output,
    so the report is false, and the run is an error (a pass needs no lie; a lie is never a pass)."""
    source = REFERENCE["rmsnorm"].read_text() + "\n" + forgery
    code, report = grade_json("rmsnorm", "--file", submission(source, "rmsnorm.py"))
    assert (code, report["status"]) == (1, "error")
    assert report["message"].startswith(f"{MALFORMED_TREE}: {said}")
    assert report["params_diff"] == []
    jsonschema.validate(report, SCHEMA)


# A correct Transformer-XL attention, its output scaled (wrong everywhere), whose worker reports u's initial
# values as v's and v's as u's: the mistake a diagnosis names where a learner declares v before u.
SWAPPED_VALUES = '''
import grader.sandbox.moved as _moved

_observe = _moved.observe


def _swapped(call):
    found = _observe(call)
    if found and "params/u" in found and "params/v" in found:
        found = dict(found, **{"params/u": found["params/v"], "params/v": found["params/u"]})
    return found


_moved.observe = _swapped
_right = transformer_xl_attention


def transformer_xl_attention(seed, x, memory, num_heads):
    return _right(seed, x, memory, num_heads) * 1.5
'''


def test_initial_values_the_outputs_do_not_bear_out_name_no_parameter(grade_json, submission):
    """Values a worker reports name a swapped parameter only where the reference, run on them, gives the
    learner's output: here it does not, so the report names no swap (and hides no known mistake)."""
    base = (ROOT / "solutions" / "transformer_xl_attention" / "alternatives" / "compact_loop_heads.py").read_text()
    code, report = grade_json("transformer_xl_attention", "--file",
                              submission(base + SWAPPED_VALUES, "transformer_xl_attention.py"))
    assert (code, report["status"]) == (1, "fail")
    assert (report["diagnosis"] or {}).get("id") != "parameter_values"
    assert "holds the values the reference gives" not in json.dumps(report)
