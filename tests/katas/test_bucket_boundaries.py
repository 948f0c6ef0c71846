"""Bucket indices are exact, except at the cells where the log formula is a whole number.

The reference runs in a worker exactly as in grading (same JAX flags, under jax.jit); it must equal the
exact integer-arithmetic answer at every other cell, over a broad grid of the input domain.
"""

import importlib.util

import numpy as np
import pytest

from conftest import ROOT
from grader.problem import problems
from grader.grading.trusted import Trusted

PROBLEM = problems.load(ROOT, "t5_relative_pos")
HOOK = PROBLEM.hooks()


def grid():
    configs = []
    for nb in range(4, 66, 2):
        me = nb // 4
        for md in sorted({me + 1, me + 2, me + 3, 2 * me + 1, 3 * me, 4 * me, 8 * me, 16 * me, 128}):
            if md > me:
                configs.append({"seed": 0, "T": 160, "num_buckets": nb, "max_distance": md})
    return configs


@pytest.fixture(scope="module")
def reference_outputs():
    trusted = Trusted(PROBLEM, use_cache=False)
    try:
        configs = grid()
        yield list(zip(configs, trusted.outputs("reference", configs)))
    finally:
        trusted.close()


def test_the_reference_is_exact_off_the_boundary_cells(reference_outputs):
    checked = 0
    for args, out in reference_outputs:
        T, nb, md = args["T"], args["num_buckets"], args["max_distance"]
        exact = HOOK.exact_buckets(T, nb, md).reshape(-1)
        boundary = HOOK.boundary_mask(T, nb, md).reshape(-1)
        assert np.array_equal(out[~boundary], exact[~boundary]), args
        alt = HOOK.accept_also(args, out)
        at = boundary & ~np.isnan(alt)
        # At a boundary cell the reference holds one neighbour and the hook offers the other.
        assert np.all(np.abs(out[at] - alt[at]) == 1), args
        assert np.all(np.isnan(alt[~boundary])), args
        checked += out.size
    assert checked > 1_000_000


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.t5_relative_pos


def test_correct_float64_code_does_land_one_bucket_apart_somewhere(reference_outputs):
    """The accepted-neighbour rule is needed: without it, a correct float64 solution would fail."""
    float64 = load(ROOT / "solutions" / "t5_relative_pos" / "alternatives" / "numpy_float64.py")
    apart = 0
    for args, out in reference_outputs:
        mine = float64(**args)
        diff = mine != out
        if diff.any():
            boundary = HOOK.boundary_mask(args["T"], args["num_buckets"], args["max_distance"]).reshape(-1)
            assert boundary[diff].all(), f"{args}: differs off the boundary cells"
            alt = HOOK.accept_also(args, out)
            assert np.array_equal(mine[diff], alt[diff])
            apart += int(diff.sum())
    assert apart > 0
