"""The registry of diagnosis ids: every id the relations give is declared there, and `grade check`'s check of
the ids a known mistake cites refuses one that no relation gives."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from conftest import ROOT
from grader.explain import ids
from grader.explain.relations import diagnose
from grader.problem import problems

TOL = dict(rtol=1e-5, atol=1e-6)


def normal(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def bf16(x):
    """Rounded to the nearest bfloat16, kept as float32."""
    b = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def rms(x, eps=0.0, dtype=np.float32):
    """RMSNorm over the last axis, computed in ``dtype``."""
    x = np.asarray(x, dtype)
    with np.errstate(all="ignore"):
        return (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + dtype(eps))).astype(np.float32)


def mistakes() -> dict[str, tuple]:
    """A learner's mistake that each relation names: name -> (expected, actual, args)."""
    e, x = normal(5, 7), normal(6, 8, seed=1)
    shifted = np.zeros_like(e)
    shifted[1:] = e[:-1]
    zero_row = x.copy()
    zero_row[2] = 0
    huge = x.copy()
    huge[[1, 4]] *= np.float32(3e19)
    square = normal(4, 4, seed=2)
    return {
        "half the output": (e, (e * np.float32(0.5)).astype(np.float32), {"num_heads": 2}),
        "rows reversed": (e, e[::-1].copy(), {}),
        "transposed": (square, square.T.copy(), {}),
        "rows swapped": (e, e[[1, 0, 3, 2, 4]], {}),
        "rows shifted down": (e, shifted, {}),
        "values scrambled": (e, np.random.default_rng(3).permutation(e.ravel()).reshape(e.shape), {}),
        "no eps": (rms(zero_row, 1e-6), rms(zero_row), {"x": zero_row, "eps": 1e-6}),
        "squares overflow": (rms(huge, 1e-6, np.float64), rms(huge, 1e-6), {"x": huge, "eps": 1e-6}),
        "computed in bfloat16": (rms(x, 1e-6), bf16(rms(bf16(x), 1e-6)), {"x": x, "eps": 1e-6}),
        "residual added": (np.tanh(x), (np.tanh(x) + x).astype(np.float32), {"x": x}),
        "residual left out": (np.tanh(x), (np.tanh(x) - x).astype(np.float32), {"x": x}),
    }


def test_every_id_a_relation_gives_is_declared_and_every_declared_relation_is_given():
    given = {}
    for name, (expected, actual, args) in mistakes().items():
        found = diagnose(expected, actual, args, **TOL)
        assert found is not None, name
        given[name] = found.id
    assert set(given.values()) <= set(ids.DIAGNOSES), given
    assert set(given.values()) == ids.RELATIONS, given


def test_every_id_is_declared_once_with_one_line_saying_what_it_is():
    declared = [value for name, value in vars(ids).items() if name.isupper() and isinstance(value, str)]
    assert sorted(declared) == sorted(ids.DIAGNOSES) and len(set(declared)) == len(declared)
    assert ids.RELATIONS < set(ids.DIAGNOSES)
    assert all(says and "\n" not in says and len(says) <= 100 for says in ids.DIAGNOSES.values())


@pytest.fixture
def rmsnorm(tmp_path):
    for side in ("problems", "solutions"):
        shutil.copytree(ROOT / side / "rmsnorm", tmp_path / side / "rmsnorm")
    return tmp_path


def test_the_shipped_citations_are_known(rmsnorm):
    assert ids.unknown_diagnoses(problems.load(rmsnorm, "rmsnorm")) == {}


def test_an_unknown_id_in_pitfalls_toml_is_refused_naming_the_file_the_entry_and_the_ids(rmsnorm):
    toml = rmsnorm / "solutions" / "rmsnorm" / "pitfalls.toml"
    toml.write_text(toml.read_text().replace('diagnosis = "reduced_precision"', 'diagnosis = "reduced_precison"'))
    said = ids.unknown_diagnoses(problems.load(rmsnorm, "rmsnorm"))
    assert list(said) == ["bfloat16"]
    assert said["bfloat16"].startswith("solutions/rmsnorm/pitfalls.toml: pitfall 'bfloat16': diagnosis "
                                       "'reduced_precison' is no relation's id (did you mean reduced_precision?); "
                                       "a known mistake may cite ")
    assert all(relation in said["bfloat16"] for relation in ids.RELATIONS)


def test_an_id_no_relation_gives_is_refused_in_a_variant_file(rmsnorm):
    problem = problems.load(rmsnorm, "rmsnorm")
    text = problem.variants("pitfalls")["bfloat16"].read_text()
    (problem.solution_folder / "pitfalls").mkdir()
    (problem.solution_folder / "pitfalls" / "in_bf16.py").write_text(
        text.replace("DIAGNOSIS = 'reduced_precision'", f"DIAGNOSIS = {ids.DEPENDENCE!r}"))
    said = ids.unknown_diagnoses(problems.load(rmsnorm, "rmsnorm"))
    assert list(said) == ["in_bf16"]
    assert said["in_bf16"].startswith("solutions/rmsnorm/pitfalls/in_bf16.py: DIAGNOSIS 'dependence' is no "
                                      "relation's id; a known mistake may cite constant_factor, ")
