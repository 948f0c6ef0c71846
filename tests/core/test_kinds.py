"""The argument kinds, alone: each kind checks, keeps and hashes its values the one way every part of the
grader relies on (strategies, case files, the wire, cache keys, traced signatures)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from grader.core import kinds

KINDS = {"seed": "int", "causal": "bool", "eps": "float", "x": "array:float32", "ids": "array:int32",
         "method": "str:linear|ntk|dynamic"}


def case(**changes):
    args = {"seed": 0, "causal": True, "eps": 1e-6, "x": np.arange(6, dtype=np.float32).reshape(2, 3),
            "ids": np.array([3, 1], dtype=np.int32), "method": "ntk"}
    return {**args, **changes}


def test_a_case_file_keeps_every_kind_exactly():
    args = case()
    data = json.loads(json.dumps({name: kinds.kind(k).to_json(args[name]) for name, k in KINDS.items()}))
    back = {name: kinds.kind(k).from_json(data[name]) for name, k in KINDS.items()}
    assert back["seed"] == 0 and back["causal"] is True and back["eps"] == 1e-6 and back["method"] == "ntk"
    for name in ("x", "ids"):
        assert back[name].dtype == args[name].dtype and np.array_equal(back[name], args[name])
    empty = kinds.kind("array:float32").from_json({"shape": [0, 4], "data": []})  # what TOML cannot write
    assert empty.shape == (0, 4) and empty.dtype == np.float32


@pytest.mark.parametrize("kind, value, says", [
    ("int", True, "must be an int"), ("int", 1.5, "must be an int"), ("bool", 1, "must be true or false"),
    ("float", "1", "must be a number"), ("array:float32", [[1], [2, 3]], "must be an array of float32"),
    ("array:int32", {"data": [1]}, "'shape' and 'data'"), ("str", 3, "must be a string"),
    ("str:linear|ntk", "NTK", "must be one of 'linear', 'ntk', got 'NTK'"),
])
def test_a_value_of_the_wrong_kind_is_refused_with_a_sentence(kind, value, says):
    with pytest.raises(kinds.KindError, match=says):
        kinds.kind(kind).coerce(value) if kind != "array:int32" else kinds.kind(kind).from_json(value)


def test_an_input_too_large_to_be_one_is_refused():
    with pytest.raises(kinds.KindError, match="more than the"):
        kinds.kind("array:float32").coerce(np.zeros(kinds.MAX_ARRAY_VALUES + 1, np.float32))


def test_the_digest_tells_every_difference_and_only_differences():
    base = kinds.args_digest(KINDS, case())
    assert kinds.args_digest(KINDS, case()) == base
    others = [case(seed=1), case(causal=False), case(eps=2e-6), case(ids=np.array([1, 3], np.int32)), case(method="linear"),
              case(x=np.arange(6, dtype=np.float32).reshape(3, 2)),  # same values, another shape
              kinds.with_moved(case(), True), kinds.with_moved(case(), ("params/w",))]
    digests = [kinds.args_digest(KINDS, args) for args in others]
    assert base not in digests and len(set(digests)) == len(digests)
    assert kinds.args_digest(KINDS, kinds.with_moved(kinds.with_moved(case(), True), False)) == base


def test_the_traced_signature_holds_static_values_and_shapes_only():
    sig = kinds.signature(KINDS, case())
    assert sig == (0, True, None, (2, 3), (2,), "ntk")  # each method a program of its own
    assert kinds.signature(KINDS, case(eps=0.5, x=np.ones((2, 3), np.float32))) == sig  # one trace serves both
    assert kinds.signature(KINDS, kinds.with_moved(case(), True)) == sig  # the move's weight is traced
    assert kinds.signature(KINDS, kinds.with_moved(case(), ("params/w",))) == sig + (("params/w",),)


def test_the_wire_form_decodes_to_the_same_call():
    arrays: list = []
    entries = kinds.encode(KINDS, case(), arrays)
    values, static = kinds.decode(json.loads(json.dumps(entries)), arrays)
    assert static == (0, 1, 5) and values[:3] == [0, True, 1e-6] and values[5] == "ntk"
    assert np.array_equal(values[3], case()["x"]) and np.array_equal(values[4], case()["ids"])


@pytest.mark.parametrize("name", ["str:linear||ntk", "str: linear|ntk", "str:ntk|ntk", "str:", "string", "str:a|b ", 3])
def test_a_kind_that_is_none_is_refused_with_a_sentence(name):
    with pytest.raises(kinds.KindError, match=re.escape("str:<choice>|<choice>...")):
        kinds.kind(name)


def test_a_case_file_s_method_is_checked_against_the_choices_on_the_way_in():
    method = kinds.kind("str:linear|ntk|dynamic")
    assert method is kinds.kind("str:linear|ntk|dynamic") and method.from_json("dynamic") == "dynamic"
    assert method.coerce(np.str_("ntk")) == "ntk" and type(method.coerce(np.str_("ntk"))) is str  # from an .npz
    with pytest.raises(kinds.KindError, match="must be one of 'linear', 'ntk', 'dynamic', got 'yarn'"):
        method.from_json("yarn")
