"""alibi_bias: the reference is the paper's bias with the paper's slopes, the known mistakes are the conventions
the statement says they are, the properties hold on the reference and name what they claim to, and the
generated inputs are what the statement promises.

Everything runs in this process, starting nothing (`grade check alibi_bias`, run by
tests/instructor/test_check.py, covers the variants and alternatives through the grader;
benchmarks/feedback.py grades the corpus). The reference runs under jax.jit with its integer arguments
static, as a grading worker runs it.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from peers import get_slopes
from grader.problem import problems

SLUG = "alibi_bias"
PROBLEM = problems.load(ROOT, SLUG)
REFERENCE = problems.load_module(PROBLEM.reference, "alibi_bias_reference_under_test")
STRATEGIES = problems.load_module(PROBLEM.folder / "strategies.py", "alibi_bias_strategies_under_test")
PROPERTIES = PROBLEM.properties()
CHECKS = PROPERTIES.PROPERTIES
RTOL = ATOL = 1e-5  # problem.toml's tolerance


def paper(T, num_heads):
    """(H, T, T) float64: bias[h, i, j] = m_h (j - i) with the get_slopes slopes, on the whole grid."""
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return np.asarray(get_slopes(num_heads))[:, None, None] * (j - i)[None, :, :]


@functools.cache
def jitted(path):
    module = problems.load_module(path, f"alibi_bias_{path.parent.name}_{path.stem}")
    return jax.jit(module.alibi_bias, static_argnums=(0, 1, 2))


def run(path, T, num_heads):
    """(H, T, T) numpy: the module at ``path`` on those arguments, jitted as in grading."""
    out = np.asarray(jitted(path)(0, T, num_heads))
    assert out.dtype == np.float32 and out.shape == (num_heads * T * T,)
    return out.reshape(num_heads, T, T)


def reference(T, num_heads):
    return run(PROBLEM.reference, T, num_heads)


def variant(name, T, num_heads):
    return run(PROBLEM.variants("pitfalls")[name], T, num_heads)


def fraction_of_tolerance(actual, expected):
    return float(np.max(np.abs(actual - expected) / (ATOL + RTOL * np.abs(expected))))


def within_tolerance(actual, expected):
    return actual.shape == expected.shape and fraction_of_tolerance(actual, expected) <= 1.0


# -- the reference against the paper ------------------------------------------------------------------------

@pytest.mark.parametrize("example", PROBLEM.examples, ids=[ex.name.split(":")[0] for ex in PROBLEM.examples])
def test_the_worked_examples_are_the_paper_s_bias(example):
    T, H = example.args["T"], example.args["num_heads"]
    exact = paper(T, H)
    np.testing.assert_allclose(np.asarray(example.expected, dtype=np.float64), exact, rtol=1e-7, atol=0)
    np.testing.assert_allclose(reference(T, H), exact, rtol=1e-7, atol=0)


@pytest.mark.parametrize("num_heads", range(1, 65))
def test_the_slopes_are_ofirpress_s_get_slopes_for_every_head_count_up_to_64(num_heads):
    """The closed form of the statement and the reference's float32 slopes against the published recursion."""
    published = np.asarray(get_slopes(num_heads))
    closed, c = PROPERTIES.rule(num_heads)
    assert c == 2 ** math.floor(math.log2(num_heads))
    np.testing.assert_allclose(closed, published, rtol=1e-13, atol=0)  # the recursion multiplies its roundings
    ours = np.asarray(REFERENCE.alibi_slopes(num_heads))
    assert ours.dtype == np.float32 and ours.shape == (num_heads,)
    np.testing.assert_allclose(ours, published, rtol=6e-8, atol=0)  # one rounding to float32


@settings(max_examples=40, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 100), st.integers(1, 64))
def test_the_reference_is_the_paper_s_bias_off_the_menus(T, num_heads):
    """Sizes the strategy never draws: one float32 rounding per value, a tiny fraction of the tolerance."""
    out = reference(T, num_heads)
    exact = paper(T, num_heads)
    assert np.max(np.abs(out - exact) / np.maximum(np.abs(exact), 1e-30)) <= 1.2e-7
    assert fraction_of_tolerance(out, exact) < 0.02


@pytest.mark.parametrize("name", sorted(PROBLEM.variants("alternatives")))
def test_every_alternative_is_the_paper_s_bias(name):
    path = PROBLEM.variants("alternatives")[name]
    for T, H in ((4, 3), (1, 1), (64, 24), (64, 20), (16, 31), (5, 12), (33, 48), (2, 64)):
        assert fraction_of_tolerance(run(path, T, H), paper(T, H)) < 0.25, (name, T, H)


def test_the_helpers_are_the_stub_s_parts_and_the_reference_s_steps():
    assert PROBLEM.helpers() == ["alibi_slopes", "relative_positions"]
    grid = np.asarray(REFERENCE.relative_positions(5))
    assert np.array_equal(grid, np.arange(5)[None, :] - np.arange(5)[:, None])


# -- the statement's figures --------------------------------------------------------------------------------

def test_the_jump_of_twelve_heads_and_the_slopes_of_twenty_four():
    """Example 3's slopes as the statement prints them, and its sentence on 24 heads."""
    printed = [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
               0.707107, 0.353553, 0.176777, 0.088388]
    np.testing.assert_allclose(get_slopes(12), printed, rtol=0, atol=5e-7)
    twenty_four = [2.0 ** (-k / 2) for k in range(1, 17)] + [2.0 ** (-(2 * j + 1) / 4) for j in range(8)]
    np.testing.assert_allclose(get_slopes(24), twenty_four, rtol=1e-13, atol=0)
    np.testing.assert_allclose(get_slopes(6), [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8], rtol=1e-13)


def mpt_slopes(num_heads):
    """Hugging Face MPT's build_mpt_alibi_tensor slopes, in float64: 2 ** (-8 k / P) for the next power of two P,
    then (where P != H) those at odd indices before those at even ones, cut to H."""
    p = 2 ** math.ceil(math.log2(num_heads))
    slopes = 1.0 / 2.0 ** (np.arange(1, p + 1) * (8.0 / p))
    if p != num_heads:
        slopes = np.concatenate([slopes[1::2], slopes[::2]])[:num_heads]
    return slopes


def bloom_slopes(num_heads):
    """Hugging Face BLOOM's build_alibi_tensor slopes: two float32 powers, base ** (1 .. c), extra_base ** (1, 3, ...)
    with base = 2 ** (-8 / c) and extra_base = 2 ** (-4 / c), each rounded to float32 first."""
    c = 2 ** math.floor(math.log2(num_heads))
    base = np.float32(2 ** (-(2 ** -(math.log2(c) - 3))))
    slopes = base ** np.arange(1, 1 + c, dtype=np.float32)
    if c != num_heads:
        extra_base = np.float32(2 ** (-(2 ** -(math.log2(2 * c) - 3))))
        extra = extra_base ** np.arange(1, 1 + 2 * min(c, num_heads - c), 2, dtype=np.float32)
        slopes = np.concatenate([slopes, extra])
    return slopes


@pytest.mark.parametrize("num_heads", [1, 2, 3, 5, 6, 7, 8, 12, 20, 24, 31, 32, 40, 64])
def test_mpt_and_bloom_build_the_same_slopes(num_heads):
    """The statement: BLOOM and Falcon compute the same slopes as two float32 powers, MPT by another route."""
    np.testing.assert_allclose(mpt_slopes(num_heads), get_slopes(num_heads), rtol=1e-13, atol=0)
    np.testing.assert_allclose(bloom_slopes(num_heads), get_slopes(num_heads), rtol=1e-6, atol=0)


def test_the_floating_point_note_s_figures():
    """Largest value 52.98; m j - m i in float32 within a fifth of the tolerance; bfloat16 exact up to 8 heads,
    its slopes off by up to 0.005 (12 heads) and 0.07 (20 and more) at T = 64, and 0.18 where the product is
    rounded too."""
    assert max(float(np.max(paper(64, H))) for H in STRATEGIES.HEAD_COUNTS) == pytest.approx(63 * 2 ** -0.25)
    assert 63 * 2 ** -0.25 == pytest.approx(52.98, abs=0.005)
    for H in STRATEGIES.HEAD_COUNTS:
        m = jnp.asarray(get_slopes(H), jnp.float32)[:, None]
        rows = m * jnp.arange(64, dtype=jnp.float32)[None, :]  # (H, T): BLOOM's m j
        assert fraction_of_tolerance(np.asarray(rows[:, None, :] - rows[:, :, None]), paper(64, H)) < 0.2

    def slopes_rounded(H):  # what the bfloat16 variant computes under jax.jit (XLA keeps the product in float32)
        return variant("bfloat16", 64, H)

    def product_rounded(H):  # operation by operation: the product rounded to bfloat16 too
        m = jnp.asarray(get_slopes(H), jnp.float32).astype(jnp.bfloat16)
        k = jnp.asarray(np.arange(64)[None, :] - np.arange(64)[:, None]).astype(jnp.bfloat16)
        return np.asarray((m[:, None, None] * k[None]).astype(jnp.float32))

    for H in (1, 2, 3, 4, 5, 6, 7, 8):
        assert np.array_equal(slopes_rounded(H), reference(64, H)) and np.array_equal(product_rounded(H), paper(64, H))
    worst = {H: float(np.max(np.abs(slopes_rounded(H) - paper(64, H)))) for H in (12, 16, 20, 24, 31, 32)}
    assert 0.004 < worst[12] < 0.005 and 0.004 < worst[16] < 0.005
    assert all(0.06 < worst[H] < 0.07 for H in (20, 24, 31, 32))
    assert all(fraction_of_tolerance(slopes_rounded(H), paper(64, H)) > 10 for H in worst)
    assert 0.17 < max(float(np.max(np.abs(product_rounded(H) - paper(64, H)))) for H in (20, 24, 31, 32)) < 0.19
    assert float(np.abs(jnp.float32(2 ** -0.5).astype(jnp.bfloat16).astype(jnp.float32))) == 0.70703125


# -- the known mistakes are the conventions the statement names -----------------------------------------------

STATEMENT_SLOPES = {  # 3 heads, as the statement and the messages print them
    None: [1 / 16, 1 / 256, 1 / 4],
    "naive_slopes": [0.157490, 0.024803, 0.003906],
    "next_power_truncated": [1 / 4, 1 / 16, 1 / 64],
    "extra_slopes_odd_slice": [1 / 16, 1 / 256, 1 / 16],
    "exponent_off_by_one": [1, 1 / 16, 1 / 4],
    "slopes_sorted": [1 / 4, 1 / 16, 1 / 256],
    "sign_flipped": [-1 / 16, -1 / 256, -1 / 4],
}


@pytest.mark.parametrize("name", sorted(STATEMENT_SLOPES, key=str))
def test_three_heads_slopes_are_what_the_statement_prints(name):
    out = (reference if name is None else functools.partial(variant, name))(2, 3)
    np.testing.assert_allclose(out[:, 0, 1], STATEMENT_SLOPES[name], rtol=0, atol=5e-7)


@pytest.mark.parametrize("num_heads", [1, 3, 5, 6, 8, 12, 20, 24, 31])
def test_the_slope_mistakes_are_the_formulas_they_claim(num_heads):
    H = num_heads
    c = 2 ** math.floor(math.log2(H))
    p = 2 ** math.ceil(math.log2(H))
    claims = {
        "naive_slopes": [2.0 ** (-8 * (h + 1) / H) for h in range(H)],
        "next_power_truncated": [2.0 ** (-8 * (h + 1) / p) for h in range(p)][:H],
        "extra_slopes_odd_slice": get_slopes(c) + get_slopes(2 * c)[1::2][: H - c],
        "exponent_off_by_one": [2.0 ** (-8 * h / c) for h in range(c)] + get_slopes(H)[c:],
        "slopes_sorted": sorted(get_slopes(H), reverse=True),
    }
    for name, slopes in claims.items():
        expected = np.asarray(slopes)[:, None, None] * (np.arange(5)[None, :] - np.arange(5)[:, None])
        np.testing.assert_allclose(variant(name, 5, H), expected, rtol=1e-7, atol=0, err_msg=name)


def bloom(T, num_heads):
    """Hugging Face BLOOM's build_alibi_tensor on an all-ones attention mask (positions cumsum - 1 = 0 .. T-1),
    in float64: slopes times the key's position, one row per head, the same for every query."""
    positions = np.cumsum(np.ones(T)) - 1
    return np.broadcast_to(np.asarray(get_slopes(num_heads))[:, None, None] * positions[None, None, :],
                           (num_heads, T, T))


def mpt(T, num_heads):
    """Hugging Face MPT's build_mpt_alibi_tensor in float64: its slopes times arange(1 - T, 1), every row the same."""
    return np.broadcast_to(mpt_slopes(num_heads)[:, None, None] * np.arange(1 - T, 1)[None, None, :],
                           (num_heads, T, T))


@pytest.mark.parametrize("T, H", [(4, 3), (2, 12), (16, 7), (64, 24), (5, 1), (1, 5)])
def test_the_matrix_mistakes_are_the_forms_of_their_codebases(T, H):
    exact = paper(T, H)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    m = np.asarray(get_slopes(H))[:, None, None]
    forms = {
        "key_position_only": bloom(T, H),
        "last_key_zero": mpt(T, H),
        "sign_flipped": -exact,
        "symmetric_distance": -m * np.abs(j - i)[None],
        "upper_triangle_zero": np.where((j <= i)[None], exact, 0.0),
    }
    for name, form in forms.items():
        assert fraction_of_tolerance(variant(name, T, H), form) < 0.1, name


def softmax(scores):
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def test_the_codebase_forms_give_the_paper_s_causal_attention_weights():
    """The statement: inside a causal softmax all five forms give the same weights (why alibi_attention accepts
    them and only this problem names them)."""
    rng = np.random.default_rng(0)
    T, H = 9, 6
    scores = rng.normal(size=(H, T, T))
    causal = np.tril(np.ones((T, T), dtype=bool))
    want = softmax(np.where(causal, scores + paper(T, H), -np.inf))
    for name in ("key_position_only", "last_key_zero", "symmetric_distance", "upper_triangle_zero"):
        got = softmax(np.where(causal, scores + variant(name, T, H), -np.inf))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6, err_msg=name)
    flipped = softmax(np.where(causal, scores + variant("sign_flipped", T, H), -np.inf))
    assert np.max(np.abs(flipped - want)) > 0.05


def test_powers_of_two_hide_the_slope_mistakes_and_the_grid_mistakes_show_from_two_positions():
    """The statement's Input domain: with a power of two every slope formula but the off-by-one agrees with the
    rule; bfloat16 agrees up to 8 heads; T = 1 hides everything; every mistake shows on (T = 4, 12 heads)."""
    hidden_by_powers = {"naive_slopes", "next_power_truncated", "extra_slopes_odd_slice", "slopes_sorted", "bfloat16"}
    for name in PROBLEM.variants("pitfalls"):
        for H in (1, 2, 4, 8):
            assert within_tolerance(variant(name, 5, H), reference(5, H)) == (name in hidden_by_powers), (name, H)
        assert np.array_equal(variant(name, 1, 5), reference(1, 5)), name
        assert not within_tolerance(variant(name, 4, 12), reference(4, 12)), name
        assert not within_tolerance(variant(name, 2, 12), reference(2, 12)), name  # the third worked example


# -- the properties -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("T", [1, 2, 5, 64, 100])
def test_the_reference_has_every_property(T):
    for H in (1, 2, 3, 5, 8, 12, 16, 24, 31, 32, 48):
        args = {"seed": 0, "T": T, "num_heads": H}
        out = reference(T, H)
        assert [check(args, out) for check in CHECKS] == [None] * len(CHECKS), args


def test_the_correct_forms_of_the_bias_have_every_property():
    """BLOOM's m j - m i and float64 cast once: other correct programs, held to the same properties."""
    for T, H in ((64, 24), (16, 12), (5, 3)):
        args = {"seed": 0, "T": T, "num_heads": H}
        for out in (paper(T, H).astype(np.float32), variant("key_position_only", T, H)
                    - np.diagonal(variant("key_position_only", T, H), axis1=1, axis2=2)[:, :, None]):
            assert [check(args, out) for check in CHECKS] == [None] * len(CHECKS), args


WHAT_THE_PROPERTIES_SAY = {  # known mistake -> words the properties' sentences must hold, on (T = 5, 12 heads)
    "naive_slopes": ["2 ** (-8 (h + 1) / 12) for every head"],
    "next_power_truncated": ["first 12 slopes of the 16-head sequence"],
    "extra_slopes_odd_slice": ["repeat the first heads' slopes"],
    "exponent_off_by_one": ["head 0 slope 1"],
    "slopes_sorted": ["sorted from steepest to flattest"],
    "sign_flipped": ["the sign flipped"],
    "key_position_only": ["diagonal cell", "m j, the key's position alone"],
    "last_key_zero": ["diagonal cell", "measured from the last key"],
    "symmetric_distance": ["symmetric about the diagonal"],
    "upper_triangle_zero": ["0 everywhere above the diagonal"],
    "bfloat16": ["rounding to bfloat16"],
}


@pytest.mark.parametrize("name", sorted(PROBLEM.variants("pitfalls")))
def test_the_properties_say_what_each_known_mistake_is(name):
    args = {"seed": 0, "T": 5, "num_heads": 12}
    said = " ".join(filter(None, (check(args, variant(name, 5, 12)) for check in CHECKS)))
    for words in WHAT_THE_PROPERTIES_SAY[name]:
        assert words in said, (name, said)


def test_the_properties_name_the_rounded_product_and_the_reversed_heads():
    args = {"seed": 0, "T": 64, "num_heads": 24}
    m = jnp.asarray(get_slopes(24), jnp.float32).astype(jnp.bfloat16)
    k = jnp.asarray(np.arange(64)[None, :] - np.arange(64)[:, None]).astype(jnp.bfloat16)
    rounded = np.asarray((m[:, None, None] * k[None]).astype(jnp.float32))  # eagerly: the product rounded too
    assert "the size of one rounding to bfloat16" in PROPERTIES.linear_in_offset(args, rounded)
    reversed_heads = reference(64, 24)[::-1]
    assert "reverse head order" in PROPERTIES.slopes_rule(args, reversed_heads)


# -- the generated inputs -----------------------------------------------------------------------------------

@settings(max_examples=200, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_stay_in_the_stated_domain(args):
    assert args["seed"] == 0 and all(type(args[k]) is int for k in args)
    assert args["T"] in (1, 2, 4, 5, 16, 64)
    assert args["num_heads"] in (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24, 31, 32)


def test_the_worked_example_s_sizes_come_first_and_the_menus_vary_every_size():
    first = PROBLEM.examples[0].args
    assert (STRATEGIES.SEQ_LENS[0], STRATEGIES.HEAD_COUNTS[0]) == (first["T"], first["num_heads"])
    assert sorted(STRATEGIES.HEAD_COUNTS) == sorted(STRATEGIES.POWERS_OF_TWO + STRATEGIES.OTHER_HEAD_COUNTS)
    assert all(h & (h - 1) == 0 for h in STRATEGIES.POWERS_OF_TWO)
    assert not any(h & (h - 1) == 0 for h in STRATEGIES.OTHER_HEAD_COUNTS)
    assert len(STRATEGIES.OTHER_HEAD_COUNTS) > len(STRATEGIES.POWERS_OF_TWO)  # weighted to the second part of the rule
    c = {h: 1 << (h.bit_length() - 1) for h in STRATEGIES.OTHER_HEAD_COUNTS}
    assert any(h - c[h] >= 2 for h in c) and any(h >= 9 for h in c)  # a second extra head; slopes bfloat16 rounds
    assert 1 in STRATEGIES.HEAD_COUNTS and {1, 2, 64} <= set(STRATEGIES.SEQ_LENS)
    assert max(STRATEGIES.HEAD_COUNTS) == 32 and max(STRATEGIES.SEQ_LENS) == 64
