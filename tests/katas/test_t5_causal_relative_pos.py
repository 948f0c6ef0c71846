"""t5_causal_relative_pos: exact boundary handling, the reference against it, and the strategy's domain.

The reference runs in a worker exactly as in grading (same JAX flags, under jax.jit); off the cells where
the log formula is a whole number it must equal the exact integer-arithmetic answer, over a broad grid
of the input domain, odd bucket counts included.
"""

import decimal
import importlib.util
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings

from conftest import ROOT
from grader.problem import problems
from grader.grading.trusted import Trusted

SLUG = "t5_causal_relative_pos"
PROBLEM = problems.load(ROOT, SLUG)
HOOK = PROBLEM.hooks()


def load(path, name=SLUG):
    spec = importlib.util.spec_from_file_location(f"{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name) if name else module


def grid():
    configs = []
    for nb in range(2, 34):
        me = nb // 2
        for md in sorted({me + 1, me + 2, me + 3, 2 * me + 1, 3 * me, 4 * me, 8 * me, 128}):
            if md > me:
                configs.append({"seed": 0, "T": 100, "num_buckets": nb, "max_distance": md})
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
    for args, out in reference_outputs:
        T, nb, md = args["T"], args["num_buckets"], args["max_distance"]
        exact = HOOK.exact_buckets(T, nb, md)
        boundary = HOOK.boundary_mask(T, nb, md)
        assert np.array_equal(out[~boundary], exact[~boundary]), args
        alt = HOOK.accept_also(args, out)
        at = boundary & ~np.isnan(alt)
        # At a boundary cell the reference holds one neighbour and the hook offers the other.
        assert np.all(np.abs(out[at] - alt[at]) == 1), args
        assert np.all(np.isnan(alt[~boundary])), args


def test_correct_float64_code_does_land_one_bucket_apart_somewhere(reference_outputs):
    """The accepted-neighbour rule is needed: without it, a correct float64 solution would fail."""
    float64 = load(ROOT / "solutions" / SLUG / "alternatives" / "numpy_float64.py")
    apart = 0
    for args, out in reference_outputs:
        mine = float64(**args)
        diff = mine != out
        if diff.any():
            boundary = HOOK.boundary_mask(args["T"], args["num_buckets"], args["max_distance"])
            assert boundary[diff].all(), f"{args}: differs off the boundary cells"
            assert np.array_equal(mine[diff], HOOK.accept_also(args, out)[diff])
            apart += int(diff.sum())
    assert apart > 0


def test_the_statement_s_whole_number_example_is_a_boundary():
    assert HOOK.exact_log_floor(8, 8, 16) == (6, True)  # num_buckets = 8, max_distance = 16, distance 8
    assert HOOK.boundary_mask(9, 8, 16).reshape(9, 9)[8, 0]


def test_t5_s_own_setting_has_no_boundary_below_max_distance():
    assert not any(HOOK.exact_log_floor(d, 32, 128)[1] for d in range(17, 128))


def test_the_exact_floor_agrees_with_50_digit_arithmetic():
    """log_floor, which both T5 bucketings' hooks use (t5_relative_pos's with num_buckets // 2 buckets per
    sign), against the formula computed with 50 significant digits: the same floor everywhere, and a
    whole number exactly where the digits cannot tell the value from one."""
    decimal.getcontext().prec = 50
    for per_direction in range(2, 20):
        me, k = per_direction // 2, per_direction - per_direction // 2
        for md in range(me + 1, 70, 3):
            for d in range(me, 80):
                n, whole = HOOK.log_floor(d, me, k, md)
                value = me + (Decimal(d) / me).ln() / (Decimal(md) / me).ln() * k
                nearest = value.to_integral_value()
                assert whole == (abs(value - nearest) < Decimal("1e-40")), (d, me, k, md)
                assert n == (int(nearest) if whole else int(value.to_integral_value(decimal.ROUND_FLOOR)))
    assert HOOK.log_floor(16, 8, 8, 128) == (10, True)  # T5's own setting, bidirectional: 16 is a boundary


def test_per_direction_arithmetic_is_the_bidirectional_hook_s_with_halved_counts():
    """exact_log_floor(size, per_direction, ...) is the general form: with num_buckets // 2 buckets per
    direction it gives t5_relative_pos's answer (each problem keeps its own copy, so that either folder
    stands alone)."""
    bidirectional = load(ROOT / "solutions" / "t5_relative_pos" / "grading.py", name=None)
    for nb in range(4, 40, 2):
        for md in range(nb // 4 + 1, 70, 3):
            for d in range(nb // 4, 80):
                assert HOOK.exact_log_floor(d, nb // 2, md) == bidirectional.exact_log_floor(d, nb, md)


def test_the_reference_has_every_property():
    reference = load(PROBLEM.reference)
    checks = PROBLEM.properties().PROPERTIES
    for args in ({"seed": 0, "T": 30, "num_buckets": nb, "max_distance": nb // 2 + 5} for nb in (2, 3, 8, 9)):
        out = np.asarray(reference(**args)).reshape(args["T"], args["T"])
        assert [check(args, out) for check in checks] == [None] * len(checks)


@settings(max_examples=200, deadline=None, database=None)
@given(PROBLEM.strategy())
def test_generated_inputs_stay_in_the_stated_domain(args):
    nb, md, T = args["num_buckets"], args["max_distance"], args["T"]
    assert nb >= 2 and nb // 2 >= 1 and md > nb // 2 and 1 <= T <= 40


@pytest.mark.parametrize("wanted", [lambda a: a["num_buckets"] % 2 == 1, lambda a: a["num_buckets"] == 2,
                                    lambda a: a["T"] > a["max_distance"] + 1])
def test_the_strategy_reaches_odd_counts_the_smallest_count_and_the_clamp(wanted):
    from hypothesis import find

    find(PROBLEM.strategy(), wanted, settings=settings(database=None))
