"""sinusoidal_pe: the reference is the paper's table, the known mistakes are the conventions the statement
says they are, the properties hold on the reference and name what they claim to, and the generated inputs
are what the statement promises.

Everything but the last two tests runs in this process, starting nothing (`grade check sinusoidal_pe`, run
by tests/instructor/test_check.py, covers the variants and alternatives through the grader). The
reference runs under jax.jit with its integer arguments static, as a grading worker runs it.
"""

import functools
import math

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from grader.problem import problems

SLUG = "sinusoidal_pe"
PROBLEM = problems.load(ROOT, SLUG)
REFERENCE = problems.load_module(PROBLEM.reference, "sinusoidal_pe_reference_under_test")
STRATEGIES = problems.load_module(PROBLEM.folder / "strategies.py", "sinusoidal_pe_strategies_under_test")
CHECKS = PROBLEM.properties().PROPERTIES
RTOL = ATOL = 1e-4  # problem.toml's tolerance
ZERO_BY_ZERO = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # t2t_denominator at d = 2


def paper(T, d_model, offset):
    """(T, d_model) float64: Vaswani et al.'s section 3.5 as written, PE(pos, 2i) = sin(pos / 10000^(2i/d_model))
    and PE(pos, 2i + 1) = cos(pos / 10000^(2i/d_model)), pos = offset .. offset + T - 1."""
    pos = np.arange(offset, offset + T, dtype=np.float64)[:, None]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]
    angle = pos / 10000.0 ** (two_i / d_model)
    table = np.zeros((T, d_model))
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle)
    return table


@functools.cache
def jitted(path):
    module = problems.load_module(path, f"sinusoidal_pe_{path.parent.name}_{path.stem}")
    return jax.jit(module.sinusoidal_pe, static_argnums=(0, 1, 2, 3))


def run(path, T, d_model, offset):
    """(T, d_model) numpy: the module at ``path`` on those arguments, jitted as in grading."""
    out = np.asarray(jitted(path)(0, T, d_model, offset))
    assert out.dtype == np.float32 and out.shape == (T * d_model,)
    return out.reshape(T, d_model)


def reference(T, d_model, offset):
    return run(PROBLEM.reference, T, d_model, offset)


def variant(name, T, d_model, offset):
    return run(PROBLEM.variants("pitfalls")[name], T, d_model, offset)


def fraction_of_tolerance(actual, expected):
    return float(np.max(np.abs(actual - expected) / (ATOL + RTOL * np.abs(expected))))


# -- the reference against the paper's formula ------------------------------------------------------------

@pytest.mark.parametrize("example", PROBLEM.examples, ids=[ex.name.split(":")[0] for ex in PROBLEM.examples])
def test_the_worked_examples_are_the_paper_s_table(example):
    T, d, offset = (example.args[k] for k in ("T", "d_model", "offset"))
    exact = paper(T, d, offset)
    np.testing.assert_allclose(np.asarray(example.expected, dtype=np.float64), exact, rtol=0, atol=5e-7)
    np.testing.assert_allclose(reference(T, d, offset), exact, rtol=0, atol=2e-7)


@settings(max_examples=60, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 100), st.integers(1, 128), st.data())
def test_the_reference_is_the_paper_s_table_off_the_menus(T, pairs, data):
    """Sizes the strategy never draws (any T up to 100, any even d_model up to 256), positions below 128 as in
    the domain: the reference stays within a tenth of the tolerance (the statement says below 1e-5)."""
    offset = data.draw(st.integers(0, max(0, 128 - T)))
    d = 2 * pairs
    out = reference(T, d, offset)
    exact = paper(T, d, offset)
    assert np.max(np.abs(out - exact)) < 1e-5
    assert fraction_of_tolerance(out, exact) < 0.1


@pytest.mark.parametrize("offset, T, bound", [(0, 128, 1e-5), (0, 1100, 8e-5), (3000, 1200, 3e-4)])
def test_the_floating_point_note_s_figures(offset, T, bound):
    """The statement's note: a float32 table is within 1e-5 of the exact values below position 128, 8e-5 below
    1100, 3e-4 near 4000 (where it leaves the tolerance: why generated positions stay below 128)."""
    worst = max(np.max(np.abs(reference(T, d, offset) - paper(T, d, offset))) for d in (2, 4, 16, 64, 128, 256))
    assert worst < bound
    if offset >= 3000:
        assert worst > ATOL


@pytest.mark.parametrize("name", sorted(PROBLEM.variants("alternatives")))
def test_every_alternative_is_the_paper_s_table(name):
    path = PROBLEM.variants("alternatives")[name]
    for T, d, offset in ((3, 4, 0), (48, 128, 79), (1, 2, 0), (7, 12, 100), (33, 10, 64)):
        assert fraction_of_tolerance(run(path, T, d, offset), paper(T, d, offset)) < 0.1, (name, T, d, offset)


# -- the known mistakes are the conventions the statement names -------------------------------------------

def t2t(T, d_model, offset, halves=True):
    """tensor2tensor's get_timing_signal_1d in float64: log-spaced timescales 1 .. 10000, [sin | cos]."""
    pos = np.arange(offset, offset + T, dtype=np.float64)[:, None]
    n = d_model // 2
    inv = np.exp(np.arange(n) * -(math.log(10000.0) / max(n - 1, 1)))
    angle = pos * inv
    if halves:
        return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)
    return np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(T, d_model)


def marian(T, d_model, offset):
    """Hugging Face Marian's sinusoid in float64: the paper's angles, all sines then all cosines."""
    angle = paper(T, d_model, offset)
    return np.concatenate([angle[:, 0::2], angle[:, 1::2]], axis=1)


STATEMENT_ROWS = {  # example 3 (T = 2, d_model = 8, offset = 0), position 1, as the statement prints them
    None: [0.841471, 0.540302, 0.099833, 0.995004, 0.010000, 0.999950, 0.001000, 1.000000],
    "t2t_signal": [0.841471, 0.046399, 0.002154, 0.000100, 0.540302, 0.998923, 0.999998, 1.000000],
    "halves_concatenated": [0.841471, 0.099833, 0.010000, 0.001000, 0.540302, 0.995004, 0.999950, 1.000000],
    "missing_factor_two": [0.841471, 0.540302, 0.310984, 0.950415, 0.099833],
    "per_column_exponent": [0.841471, 0.950415, 0.099833, 0.999500],
    "t2t_denominator": [0.841471, 0.540302, 0.046399],
}


@pytest.mark.parametrize("name", sorted(STATEMENT_ROWS, key=str))
def test_example_3_s_second_row_tells_the_conventions_apart_as_the_statement_prints(name):
    row = (reference if name is None else functools.partial(variant, name))(2, 8, 0)[1]
    wanted = STATEMENT_ROWS[name]
    np.testing.assert_allclose(row[:len(wanted)], wanted, rtol=0, atol=6e-7)


@ZERO_BY_ZERO
@pytest.mark.parametrize("T, d, offset", [(3, 4, 0), (5, 8, 17), (48, 128, 79), (16, 6, 3), (1, 2, 0)])
def test_the_codebase_conventions_are_their_peers_float64_formulas(T, d, offset):
    assert fraction_of_tolerance(variant("t2t_signal", T, d, offset), t2t(T, d, offset)) < 0.1
    assert fraction_of_tolerance(variant("halves_concatenated", T, d, offset), marian(T, d, offset)) < 0.1
    if d > 2:  # tensor2tensor's spacing guards d_model = 2; the hand-written one divides by zero there
        assert fraction_of_tolerance(variant("t2t_denominator", T, d, offset), t2t(T, d, offset, halves=False)) < 0.1
    else:
        assert np.isnan(variant("t2t_denominator", T, d, offset)).all()


@ZERO_BY_ZERO
def test_d_model_2_hides_the_layout_and_spacing_mistakes_and_the_rest_show_on_it_or_on_offsets():
    """The statement: with one pair, the layouts and spacings agree with the paper; the other sizes tell them
    apart. The offset mistakes need offset > 0 (positions_from_one shows everywhere)."""
    hidden_at_2 = {"halves_concatenated", "t2t_signal", "missing_factor_two", "inverted_frequency"}
    for name in PROBLEM.variants("pitfalls"):
        at_2 = variant(name, 3, 2, 17)
        same_at_2 = at_2.shape == (3, 2) and np.allclose(at_2, reference(3, 2, 17), rtol=RTOL, atol=ATOL)
        assert same_at_2 == (name in hidden_at_2), name
        assert not np.allclose(variant(name, 3, 4, 17), reference(3, 4, 17), rtol=RTOL, atol=ATOL), name
    assert np.array_equal(variant("offset_ignored", 3, 4, 0), reference(3, 4, 0))


# -- the properties -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("T", [1, 2, 5, 48, 120])
def test_the_reference_has_every_property(T):
    for d in (2, 4, 6, 10, 64, 128, 256):
        for offset in (0, 1, 79, 500):
            args = {"seed": 0, "T": T, "d_model": d, "offset": offset}
            out = reference(T, d, offset)
            assert [check(args, out) for check in CHECKS] == [None] * len(CHECKS), args


WHAT_THE_PROPERTIES_SAY = {  # known mistake -> words the properties' sentences must hold, on (T=5, d=8, offset=17)
    "halves_concatenated": ["[sin | cos] halves"],
    "t2t_signal": ["[sin | cos] halves", "tensor2tensor's spacing"],
    "t2t_denominator": ["tensor2tensor's spacing"],
    "missing_factor_two": ["factor 2 is missing"],
    "inverted_frequency": ["(+2k / d_model)"],
    "sin_cos_swapped": ["swapped places"],
    "offset_ignored": ["position 0 (the offset left out)"],
    "positions_from_one": ["position 18 (positions counted from 1)"],
    "per_column_exponent": ["squares sum to"],
    "bfloat16_angles": ["squares sum to", "bfloat16"],
}


@pytest.mark.parametrize("name", sorted(PROBLEM.variants("pitfalls")))
def test_the_properties_say_what_each_known_mistake_is(name):
    args = {"seed": 0, "T": 5, "d_model": 8, "offset": 17}
    said = " ".join(filter(None, (check(args, variant(name, 5, 8, 17)) for check in CHECKS)))
    for words in WHAT_THE_PROPERTIES_SAY[name]:
        assert words in said, (name, said)


# -- the generated inputs -----------------------------------------------------------------------------------

@settings(max_examples=200, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_stay_in_the_stated_domain(args):
    T, d, offset = args["T"], args["d_model"], args["offset"]
    assert args["seed"] == 0 and all(type(args[k]) is int for k in args)
    assert T in (1, 2, 3, 5, 8, 16, 33, 48) and d in (2, 4, 6, 8, 10, 16, 64, 128) and offset in (0, 1, 3, 17, 64, 79)
    assert offset + T - 1 <= 126 < 128


def test_the_worked_example_s_sizes_come_first_and_the_menus_vary_every_size():
    first = PROBLEM.examples[0].args
    assert (STRATEGIES.SEQ_LENS[0], STRATEGIES.D_MODELS[0], STRATEGIES.OFFSETS[0]) == (
        first["T"], first["d_model"], first["offset"])
    assert STRATEGIES.MAX_POSITION == 126
    assert 2 in STRATEGIES.D_MODELS and any(d > 2 and (d // 2) % 2 for d in STRATEGIES.D_MODELS)  # one pair; odd pairs
    assert 1 in STRATEGIES.SEQ_LENS and 0 in STRATEGIES.OFFSETS and max(STRATEGIES.OFFSETS) > 0


# -- through the grader ---------------------------------------------------------------------------------------

CORPUS = ROOT / "tests" / "submissions" / SLUG


# Graded end to end elsewhere, once: every corpus file (the two Flax ports told apart at d_model = 2, the
# correct ones passing) in tests/grading/test_precision.py, every alternative by `grade check` in
# tests/instructor/test_check.py.
