"""rope_scaled_angles: the reference is the four published rescalings (held to float64 transcriptions of Hugging
Face's rope initialisation functions, Meta's apply_scaling, Chen et al.'s position interpolation and bloc97's
NTK-aware base), dynamic on both sides of the trained length; the known mistakes are the formulas they claim;
the properties hold on the reference and name what they claim to; every argument and every method's branch
matters on the generated inputs, which are what the statement promises.

Everything runs in this process, starting nothing (`grade check rope_scaled_angles`, run by
tests/instructor/test_check.py, covers the variants and alternatives through the grader;
benchmarks/feedback.py grades the corpus; tests/commands/test_string_kind.py grades the string argument
end to end). The reference runs under jax.jit with T, head_dim, original_max_len and method static and base
and factor traced, as a grading worker runs it.
"""

import functools
import itertools
import math
import re
import tomllib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from grader.problem import problems

SLUG = "rope_scaled_angles"
PROBLEM = problems.load(ROOT, SLUG)
REFERENCE = problems.load_module(PROBLEM.reference, "rope_scaled_angles_reference_under_test")
STRATEGIES = problems.load_module(PROBLEM.folder / "strategies.py", "rope_scaled_angles_strategies_under_test")
PROPERTIES = PROBLEM.properties()
CHECKS = PROPERTIES.PROPERTIES
RTOL, ATOL = 1e-5, 1e-6  # problem.toml's tolerance
METHODS = ("linear", "ntk", "dynamic", "llama3")
STATIC = (0, 1, 2, 5, 6)  # seed, T, head_dim, original_max_len, method; base and factor are traced
# Read from the files at collection: PROBLEM.variants() writes the variants into the cache folder, which the
# session's private cache only replaces once collection is over.
PITFALLS = sorted(p["id"] for p in tomllib.loads((PROBLEM.solution_folder / "pitfalls.toml").read_text())["pitfall"])
ALTERNATIVES = sorted(p.stem for p in (PROBLEM.solution_folder / "alternatives").glob("*.py"))


# -- float64 transcriptions of the published formulas ---------------------------------------------------------

def hf_default_inv_freq(dim, base):
    """transformers' _compute_default_rope_parameters: 1 / base ** (arange(0, dim, 2) / dim)."""
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def hf_linear(dim, base, factor):
    """_compute_linear_scaling_rope_parameters: the default inverse frequencies divided by the factor."""
    return hf_default_inv_freq(dim, base) / factor


def hf_dynamic(dim, base, factor, max_position_embeddings, seq_len):
    """_compute_dynamic_ntk_parameters: seq_len no shorter than max_position_embeddings, then the base times
    ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))."""
    seq_len = seq_len if seq_len > max_position_embeddings else max_position_embeddings
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    return hf_default_inv_freq(dim, base)


def hf_llama3(dim, base, factor, old_context_len, low_freq_factor=1.0, high_freq_factor=4.0):
    """_compute_llama3_parameters: divide past the low-frequency wavelength, keep below the high-frequency one,
    smooth between."""
    inv_freq = hf_default_inv_freq(dim, base)
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(medium, smoothed, inv_freq_llama)


def meta_apply_scaling(freqs, scale_factor, old_context_len, low_freq_factor=1.0, high_freq_factor=4.0):
    """meta-llama llama-models' apply_scaling, frequency by frequency (its constants made arguments)."""
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < old_context_len / high_freq_factor:
            out.append(freq)
        elif wavelen > old_context_len / low_freq_factor:
            out.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return np.asarray(out)


def bloc97_ntk(dim, base, alpha):
    """NTK-aware scaled RoPE: base * alpha ** (dim / (dim - 2)), then RoPE's frequencies from it."""
    return hf_default_inv_freq(dim, base * alpha ** (dim / (dim - 2)))


def published(T, head_dim, base, factor, L, method):
    """(T, head_dim // 2) float64: position ids times the published inverse frequencies (HF's `freqs`); linear as
    Chen et al. write it, positions p * L / L' = p / factor on RoPE's own frequencies."""
    p = np.arange(T, dtype=np.float64)
    if method == "linear":
        return (p / factor)[:, None] * hf_default_inv_freq(head_dim, base)[None, :]
    freqs = {"ntk": lambda: bloc97_ntk(head_dim, base, factor),
             "dynamic": lambda: hf_dynamic(head_dim, base, factor, L, T),
             "llama3": lambda: hf_llama3(head_dim, base, factor, L)}[method]()
    return p[:, None] * freqs[None, :]


# -- running the files as a worker does -------------------------------------------------------------------------

@functools.cache
def entry(path):
    return problems.load_module(path, f"rope_scaled_angles_{path.parent.name}_{path.stem}").rope_scaled_angles


@functools.cache
def jitted(path):
    return jax.jit(entry(path), static_argnums=STATIC)


def run(path, T, head_dim, base, factor, L, method, jit=True):
    """(T, head_dim // 2) numpy: the module at ``path`` under jax.jit (eagerly where it does not trace, as the
    worker falls back, or where ``jit`` is false: every new program costs a compile, while the eager operations'
    compiles serve every file alike)."""
    args = (0, T, head_dim, float(base), float(factor), L, method)
    out = None
    if jit:
        try:
            out = jitted(path)(*args)
        except jax.errors.JAXTypeError:
            pass
    out = np.asarray(entry(path)(*args) if out is None else out)
    assert out.dtype == np.float32 and out.shape == (T * (head_dim // 2),)
    return out.reshape(T, head_dim // 2)


def reference(*args, jit=True):
    return run(PROBLEM.reference, *args, jit=jit)


def variant(name, *args):
    return run(PROBLEM.variants("pitfalls")[name], *args, jit=False)


def fraction_of_tolerance(actual, expected):
    return float(np.max(np.abs(actual - expected) / (ATOL + RTOL * np.abs(expected))))


def within_tolerance(actual, expected):
    return bool(np.all(np.isfinite(actual))) and fraction_of_tolerance(actual, expected) <= 1.0


SIZES = list(itertools.product(STRATEGIES.SEQ_LENS, STRATEGIES.HEAD_DIMS, STRATEGIES.ORIGINAL_LENS))  # static
TRACED = list(itertools.product(STRATEGIES.BASES, STRATEGIES.FACTORS))  # one program serves them all
# Every combination of the menus would be 210 programs per method; a spread of 13 per method, each with 3 or 4
# of the fifteen (base, factor) pairs (the reference's test on the menus takes all fifteen).
STATICS = [(T, d, L, method) for i, method in enumerate(METHODS) for T, d, L in SIZES[i::17]]
SAMPLE = [(T, d, base, s, L, method) for i, (T, d, L, method) in enumerate(STATICS) for base, s in TRACED[i % 4::4]]


def test_the_sample_covers_every_menu_entry_for_every_method():
    menus = (STRATEGIES.SEQ_LENS, STRATEGIES.HEAD_DIMS, STRATEGIES.BASES, STRATEGIES.FACTORS, STRATEGIES.ORIGINAL_LENS)
    for method in METHODS:
        mine = [args[:5] for args in SAMPLE if args[5] == method]
        for i, menu in enumerate(menus):
            assert {args[i] for args in mine} == set(menu), (method, i)
    assert any(T > L for T, _, _, _, L, m in SAMPLE if m == "dynamic")
    assert any(T <= L for T, _, _, _, L, m in SAMPLE if m == "dynamic")


# -- the reference against the published formulas ----------------------------------------------------------------

@pytest.mark.parametrize("example", PROBLEM.examples, ids=[ex.name.split(":")[0] for ex in PROBLEM.examples])
def test_the_worked_examples_are_the_published_tables(example):
    a = example.args
    args = (a["T"], a["head_dim"], a["base"], a["factor"], a["original_max_len"], a["method"])
    exact = published(*args)
    np.testing.assert_allclose(np.asarray(example.expected, np.float64), exact, rtol=1.2e-7, atol=0)  # kept as float32
    assert fraction_of_tolerance(reference(*args), exact) < 0.05


def test_the_reference_is_the_published_table_on_the_menus():
    for T, d, L, method in STATICS:
        for base, s in TRACED:
            assert fraction_of_tolerance(reference(T, d, base, s, L, method), published(T, d, base, s, L, method)) < 0.05


@settings(max_examples=25, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 100), st.integers(2, 64).map(lambda h: 2 * h), st.floats(2.0, 1e6), st.floats(1.0, 16.0),
       st.integers(1, 128), st.sampled_from(METHODS))
def test_the_reference_is_the_published_table_off_the_menus(T, head_dim, base, factor, L, method):
    """Sizes, bases and factors the strategy never draws, dynamic on either side of L: a fraction of the
    tolerance (float32's rounding of an angle p * w grows with p and with |log w|)."""
    out = reference(T, head_dim, base, factor, L, method)
    assert fraction_of_tolerance(out, published(T, head_dim, base, factor, L, method)) < 0.3


@pytest.mark.parametrize("L", [2, 16])
def test_dynamic_is_plain_rope_up_to_the_trained_length_and_rescaled_past_it(L):
    for T in sorted({1, L - 1, L, L + 1, 3 * L + 5} - {0}):
        for d, base, s in ((8, 10000.0, 2.0), (6, 100.0, 4.0), (6, 500000.0, 8.0), (8, 10000.0, 1.0)):
            out = reference(T, d, base, s, L, "dynamic", jit=False)
            plain = published(T, d, base, 1.0, L, "linear")
            assert fraction_of_tolerance(out, published(T, d, base, s, L, "dynamic")) < 0.05
            if T <= L:
                assert np.array_equal(out, reference(T, d, base, 1.0, L, "linear", jit=False)), (T, L)
            elif T >= 2:
                assert not within_tolerance(out, plain), (T, L, s)  # factor 1 too: alpha = T / L


def test_hf_s_dynamic_formula_gives_the_ntk_method_with_one_two_and_factor_minus_one():
    """The statement and the HF-port alternative: max_position_embeddings = 1, seq_len = 2, factor s - 1."""
    for d, base, s in itertools.product((4, 6, 8, 64, 128), (100.0, 10000.0, 500000.0), (1.0, 1.5, 2.0, 4.0, 8.0, 32.0)):
        np.testing.assert_allclose(hf_dynamic(d, base, s - 1.0, 1, 2), bloc97_ntk(d, base, s), rtol=1e-12, atol=0)


def test_meta_s_loop_and_hf_s_where_form_of_llama3_agree():
    for d, base, s, L in itertools.product((4, 8, 64, 128), (100.0, 10000.0, 500000.0), (1.0, 4.0, 8.0, 32.0),
                                           (2, 8, 16, 64, 8192)):
        np.testing.assert_allclose(meta_apply_scaling(hf_default_inv_freq(d, base), s, L), hf_llama3(d, base, s, L),
                                   rtol=1e-14, atol=0)


def test_linear_is_the_same_whether_positions_or_frequencies_are_divided():
    for T, d, base, s in ((4, 8, 10000.0, 2.0), (64, 64, 500000.0, 8.0), (40, 6, 100.0, 4.0)):
        freqs = np.arange(T)[:, None] * hf_linear(d, base, s)[None, :]
        np.testing.assert_allclose(published(T, d, base, s, 2, "linear"), freqs, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_every_alternative_is_the_published_table(name):
    path = PROBLEM.variants("alternatives")[name]
    for T, d, base, s, L, method in SAMPLE[::2] + [(17, 8, 10000.0, 2.0, 16, "dynamic"), (100, 128, 1e6, 16.0, 7, "llama3")]:
        out = run(path, T, d, base, s, L, method, jit=False)
        assert fraction_of_tolerance(out, published(T, d, base, s, L, method)) < 0.1, \
            (name, T, d, base, s, L, method)


def test_the_helpers_are_the_stub_s_parts_and_the_reference_s_steps():
    assert PROBLEM.helpers() == ["inverse_frequencies", "scaled_frequencies"]
    assert (list(PROBLEM.variants("pitfalls")), list(PROBLEM.variants("alternatives"))) == (PITFALLS, ALTERNATIVES)
    for d, base in ((4, 100.0), (8, 10000.0), (64, 500000.0)):
        w = np.asarray(REFERENCE.inverse_frequencies(d, base))
        assert w.dtype == np.float32 and w.shape == (d // 2,)
        np.testing.assert_allclose(w, hf_default_inv_freq(d, base), rtol=1e-6, atol=0)
        for method in METHODS:
            got = np.asarray(REFERENCE.scaled_frequencies(d, base, 4.0, 16, method, 40))
            np.testing.assert_allclose(got, published(40, d, base, 4.0, 16, method)[1], rtol=2e-6, atol=0)


# -- the statement's figures --------------------------------------------------------------------------------

def row1(args):
    return published(2, *args)[1]


def test_the_statement_s_numbers():
    assert 10000 * 2 ** (4 / 3) == pytest.approx(25198.4, abs=0.05)
    assert 10000 * 3 ** (4 / 3) == pytest.approx(43267.5, abs=0.05)
    lam = 2 * math.pi / hf_default_inv_freq(8, 10000.0)
    np.testing.assert_allclose(lam, [6.28, 62.8, 628, 6283], rtol=1e-3)
    assert (64 / lam[1] - 1) / 3 == pytest.approx(0.006197, abs=5e-7)
    assert 2 * 17 / 16 - 1 == 1.125 and 2 * 12 / 16 - 1 == 0.5
    np.testing.assert_allclose(row1((8, 10000.0, 2.0, 2, "ntk")), [1, 0.0793701, 0.00629961, 0.0005], rtol=1e-5)
    np.testing.assert_allclose(row1((8, 10000.0, 2.0, 2, "ntk"))[1:3] / [0.1, 0.01], [2 ** (-1 / 3), 2 ** (-2 / 3)])
    np.testing.assert_allclose(row1((8, 10000.0, 4.0, 64, "llama3")), [1, 0.0254648, 0.0025, 0.00025], rtol=1e-5)
    np.testing.assert_allclose(published(17, 8, 10000.0, 2.0, 16, "dynamic")[1], [1, 0.0961500, 0.00924482, 0.000888889],
                               rtol=1e-5)
    np.testing.assert_allclose(published(3, 4, 100.0, 4.0, 8, "ntk"), [[0, 0], [1, 0.025], [2, 0.05]], rtol=1e-12)
    # Example 1: position 3 gets position 1.5's angles; example 5: one position more changes every row.
    np.testing.assert_allclose(published(4, 8, 10000.0, 2.0, 2, "linear")[3],
                               1.5 * hf_default_inv_freq(8, 10000.0), rtol=1e-14)
    assert not np.allclose(published(17, 8, 10000.0, 2.0, 16, "dynamic")[1:16],
                           published(16, 8, 10000.0, 2.0, 16, "dynamic")[1:16])


STATEMENT_ROWS = {  # worked example 2's or 4's sizes: row 1 as the statement and the messages print it
    ("linear_multiplies", "linear"): [2, 0.2, 0.02, 0.002],
    ("ntk_no_exponent", "ntk"): [1, 0.084090, 0.007071, 0.000595],
    ("ntk_inverse_exponent", "ntk"): [1, 0.087813, 0.007711, 0.000677],
    ("ntk_divides_base", "ntk"): [1, 0.125992, 0.015874, 0.002],
    ("ntk_plus_interpolation", "ntk"): [0.5, 0.039685, 0.003150, 0.00025],
    ("dynamic_as_static", "dynamic"): [1, 0.0793701, 0.00629961, 0.0005],
    ("dynamic_last_position", "dynamic"): [1, 0.0793701, 0.00629961, 0.0005],  # alpha 2: example 2's row
    ("llama3_bands_swapped", "llama3"): [0.25, 0.025465, 0.01, 0.001],
    ("llama3_no_two_pi", "llama3"): [1, 0.1, 0.0025, 0.00025],
}


@pytest.mark.parametrize("name, method", sorted(STATEMENT_ROWS))
def test_each_mistake_s_row_is_what_the_statement_prints(name, method):
    args = (4, 8, 10000.0, 2.0, 2, method) if method != "llama3" else (3, 8, 10000.0, 4.0, 64, method)
    np.testing.assert_allclose(variant(name, *args)[1], STATEMENT_ROWS[name, method], rtol=1e-3, atol=0)  # as printed


def test_the_dynamic_mistakes_at_the_edges_of_the_trained_length():
    plain = reference(17, 8, 10000.0, 2.0, 16, "linear") * 2.0  # factor 2 undone: plain RoPE
    assert within_tolerance(variant("dynamic_last_position", 17, 8, 10000.0, 2.0, 16, "dynamic"), plain)
    assert not within_tolerance(reference(17, 8, 10000.0, 2.0, 16, "dynamic"), plain)
    # Unclamped: alpha 0 at T = L (s - 1) / s, infinities and NaN; alpha 0.5 at T = 12, L = 16, finite and wrong.
    assert not np.all(np.isfinite(variant("dynamic_unclamped", 8, 8, 10000.0, 2.0, 16, "dynamic")))
    wrong = variant("dynamic_unclamped", 12, 8, 10000.0, 2.0, 16, "dynamic")
    assert np.all(np.isfinite(wrong)) and not within_tolerance(wrong, reference(12, 8, 10000.0, 2.0, 16, "dynamic"))
    assert not within_tolerance(variant("dynamic_as_static", 2, 8, 10000.0, 2.0, 2, "dynamic"),
                                reference(2, 8, 10000.0, 2.0, 2, "dynamic"))
    # At T = L every form of dynamic agrees: switching on at T >= L is not a mistake.
    for name in ("dynamic_last_position", "dynamic_unclamped"):
        assert np.array_equal(variant(name, 16, 8, 10000.0, 2.0, 16, "dynamic"), reference(16, 8, 10000.0, 2.0, 16, "dynamic"))


def test_the_floating_point_note_s_figures():
    """float32 angles below 64 within 0.05 of the tolerance; 2.4e-4 at position 4095 (head_dim 128); bfloat16
    frequencies off by up to a tenth of a radian at position 63, 0.19 with the product rounded too; 4095 -> 4096."""
    p = np.arange(4096)
    w32 = np.asarray(REFERENCE.inverse_frequencies(128, 10000.0))
    err = np.abs(p[:, None].astype(np.float32) * w32[None, :] - p[:, None] * hf_default_inv_freq(128, 10000.0)[None, :])
    assert 2.3e-4 < float(err.max()) < 2.5e-4 and float(err[:64].max()) < 64 * 7.5e-8
    freqs_only, product = 0.0, 0.0
    for d, base in itertools.product(STRATEGIES.HEAD_DIMS, STRATEGIES.BASES):
        exact = published(64, d, base, 1.0, 2, "linear")
        w16 = jnp.asarray(hf_default_inv_freq(d, base), jnp.bfloat16)
        freqs_only = max(freqs_only, float(np.max(np.abs(
            np.arange(64)[:, None] * np.asarray(w16.astype(jnp.float32), np.float64)[None, :] - exact))))
        rounded = (jnp.arange(64, dtype=jnp.bfloat16)[:, None] * w16[None, :]).astype(jnp.float32)
        product = max(product, float(np.max(np.abs(np.asarray(rounded, np.float64) - exact))))
    assert 0.05 < freqs_only < 0.125 and 0.18 < product < 0.2
    assert float(jnp.asarray(4095.0, jnp.bfloat16)) == 4096.0 and float(jnp.asarray(256.0, jnp.bfloat16)) == 256.0


# -- the known mistakes are the formulas they claim ----------------------------------------------------------

def plain_freqs(d, base):
    return hf_default_inv_freq(d, base)


def claimed(name, T, d, base, s, L, method):
    """(T, d/2) float64: what the mistake ``name`` says it computes (the reference's table where it does not
    touch ``method``)."""
    p = np.arange(T, dtype=np.float64)[:, None]
    alpha = {"ntk": s, "dynamic": max(1.0, s * T / L - (s - 1))}.get(method)
    ntk_past_L = method == "ntk" or (method == "dynamic" and T > L)
    w = None
    if name == "linear_multiplies" and method == "linear":
        w = plain_freqs(d, base) * s
    elif name == "ntk_no_exponent" and ntk_past_L:
        w = plain_freqs(d, base * alpha)
    elif name == "ntk_inverse_exponent" and ntk_past_L:
        w = plain_freqs(d, base * alpha ** ((d - 2) / d))
    elif name == "ntk_divides_base" and ntk_past_L:
        w = plain_freqs(d, base / alpha ** (d / (d - 2)))
    elif name == "ntk_plus_interpolation" and method == "ntk":
        w = bloc97_ntk(d, base, s) / s
    elif name == "dynamic_last_position" and method == "dynamic":
        w = hf_dynamic(d, base, s, L, T - 1)
    elif name == "dynamic_unclamped" and method == "dynamic":
        with np.errstate(all="ignore"):
            w = plain_freqs(d, base * np.float64(s * T / L - (s - 1)) ** (d / (d - 2)))  # NaN below 0
    elif name == "dynamic_as_static" and method == "dynamic":
        w = bloc97_ntk(d, base, s)
    elif name == "llama3_bands_swapped" and method == "llama3":
        plain = plain_freqs(d, base)
        lam = 2 * math.pi / plain
        w = np.where(lam < L / 4, plain / s, np.where(lam > L, plain, hf_llama3(d, base, s, L)))
    elif name == "llama3_no_two_pi" and method == "llama3":
        plain = plain_freqs(d, base)
        lam = 1.0 / plain
        g = (L / lam - 1) / 3
        w = np.where(lam < L / 4, plain, np.where(lam > L, plain / s, (1 - g) * plain / s + g * plain))
    if w is None:
        return published(T, d, base, s, L, method)
    with np.errstate(all="ignore"):
        return p * w[None, :]


OWN_METHODS = {  # where each known mistake changes the code: the NTK base formula is ntk's and dynamic's
    "linear_multiplies": ("linear",), "ntk_no_exponent": ("ntk", "dynamic"), "ntk_inverse_exponent": ("ntk", "dynamic"),
    "ntk_divides_base": ("ntk", "dynamic"), "ntk_plus_interpolation": ("ntk",), "dynamic_last_position": ("dynamic",),
    "dynamic_unclamped": ("dynamic",), "dynamic_as_static": ("dynamic",), "llama3_bands_swapped": ("llama3",),
    "llama3_no_two_pi": ("llama3",),
}


@pytest.mark.parametrize("name", PITFALLS)
def test_each_known_mistake_is_the_formula_it_claims(name):
    """On its own methods' draws (elsewhere it runs the reference's code), and on one draw of every other method."""
    own = [args for args in SAMPLE if args[5] in OWN_METHODS[name]]
    others = [next(args for args in SAMPLE if args[5] == m and args[0] > 1) for m in METHODS if m not in OWN_METHODS[name]]
    for T, d, base, s, L, method in own + others + [(17, 8, 10000.0, 2.0, 16, "dynamic"), (12, 8, 10000.0, 2.0, 16, "dynamic")]:
        want = claimed(name, T, d, base, s, L, method)
        got = variant(name, T, d, base, s, L, method)
        if np.all(np.isfinite(want)):
            assert fraction_of_tolerance(got, want) < 0.1, (name, T, d, base, s, L, method)
        else:  # dynamic_unclamped at alpha <= 0: not finite where the claim is not
            assert not np.all(np.isfinite(got)), (name, T, d, base, s, L, method)


def test_every_known_mistake_fails_on_some_menu_input_and_is_hidden_by_the_degenerate_ones():
    """What the statement's domain says: factor 1 makes linear, ntk and llama3 plain RoPE, so every mistake of
    theirs is invisible there; dynamic within the trained length is plain, and only its own mistakes show
    there; T = 1 hides everything but an infinite base (dynamic_unclamped's alpha <= 0 puts NaN in row 0).
    Past those, every mistake shows on the menus."""
    for name in PROBLEM.variants("pitfalls"):
        shows = [args for args in SAMPLE if not within_tolerance(variant(name, *args), reference(*args))]
        assert shows, name
        assert all(args[0] > 1 for args in shows if name != "dynamic_unclamped"), name
        assert all(args[5] in OWN_METHODS[name] for args in shows), name
        assert all(args[3] != 1.0 for args in shows if args[5] in ("linear", "ntk", "llama3")), name
        assert all(args[0] > args[4] for args in shows if args[5] == "dynamic" and name.startswith("ntk")), name


# -- every argument and every branch matters -------------------------------------------------------------------

def test_every_argument_changes_the_table_within_the_menus():
    """A program that ignores one argument (or hard-codes it) fails: for each argument and each method that
    reads it, two menu values give different tables, everything else the first worked example's."""
    first = dict(T=4, head_dim=8, base=10000.0, factor=2.0, L=2)
    reads = {"T": ("dynamic",), "head_dim": METHODS, "base": METHODS, "factor": METHODS, "L": ("dynamic", "llama3")}
    menus = {"T": STRATEGIES.SEQ_LENS, "head_dim": STRATEGIES.HEAD_DIMS, "base": STRATEGIES.BASES,
             "factor": STRATEGIES.FACTORS, "L": STRATEGIES.ORIGINAL_LENS}
    for arg, methods in reads.items():
        for method in methods:
            rows = set()
            for value in menus[arg]:
                a = {**first, arg: value}
                if arg != "T":
                    a["T"] = 40  # past every L but 64: dynamic rescales
                table = reference(a["T"], a["head_dim"], a["base"], a["factor"], a["L"], method, jit=False)
                rows.add(tuple(np.round(table[min(1, a["T"] - 1), :2], 7)))
            assert len(rows) > 1, (arg, method)


def test_llama3_s_three_bands_and_dynamic_s_two_sides_all_occur_on_the_menus():
    bands = set()
    for d, base, L in itertools.product(STRATEGIES.HEAD_DIMS, STRATEGIES.BASES, STRATEGIES.ORIGINAL_LENS):
        lam = 2 * math.pi / hf_default_inv_freq(d, base)
        kinds = frozenset(np.where(lam < L / 4, "keep", np.where(lam > L, "divide", "blend")).tolist())
        bands.add(kinds)
    assert frozenset({"keep", "blend", "divide"}) in bands and frozenset({"divide"}) in bands
    sides = {(T > L, T == L + 1, T == L) for T, L in itertools.product(STRATEGIES.SEQ_LENS, STRATEGIES.ORIGINAL_LENS)}
    assert {(True, True, False), (True, False, False), (False, False, True), (False, False, False)} <= sides


def test_no_wavelength_on_the_menus_sits_on_a_band_edge():
    """The bands meet continuously, so a tie cannot change the reference; but the mistakes that move a band are
    not continuous: no wavelength (2 pi / w, or 1 / w for llama3_no_two_pi) lies within 1e-4 of L / 4 or L."""
    closest = 1.0
    for d, base, L in itertools.product(STRATEGIES.HEAD_DIMS, STRATEGIES.BASES, STRATEGIES.ORIGINAL_LENS):
        w = hf_default_inv_freq(d, base)
        for lam in (2 * math.pi / w, 1.0 / w):
            for edge in (L / 4, L):
                closest = min(closest, float(np.min(np.abs(lam / edge - 1.0))))
    assert closest > 1e-4


# -- the properties -----------------------------------------------------------------------------------------

def test_the_reference_has_every_property():
    extra = [(T, d, base, s, L, m) for m in METHODS for T, d, base, s, L in ((1, 4, 100.0, 2.0, 2), (100, 128, 1e6, 16.0, 7))]
    for T, d, base, s, L, method in SAMPLE + extra + [(17, 8, 10000.0, 2.0, 16, "dynamic")]:
        args = {"seed": 0, "T": T, "head_dim": d, "base": base, "factor": s, "original_max_len": L, "method": method}
        out = reference(T, d, base, s, L, method)
        assert [check(args, out) for check in CHECKS] == [None] * len(CHECKS), args


def test_the_correct_forms_have_every_property():
    """The float64 table cast to float32 and the alternatives: other correct programs, held to the same properties."""
    for T, d, base, s, L, method in SAMPLE[::5]:
        args = {"seed": 0, "T": T, "head_dim": d, "base": base, "factor": s, "original_max_len": L, "method": method}
        outs = [published(T, d, base, s, L, method).astype(np.float32)]
        outs += [run(path, T, d, base, s, L, method, jit=False) for path in PROBLEM.variants("alternatives").values()]
        for out in outs:
            assert [check(args, out) for check in CHECKS] == [None] * len(CHECKS), args


WHAT_THE_PROPERTIES_SAY = {  # known mistake -> (its arguments, words the properties' sentences must hold)
    "linear_multiplies": ((4, 8, 10000.0, 2.0, 2, "linear"), ["multiplied by the factor, not divided"]),
    "ntk_no_exponent": ((4, 8, 10000.0, 2.0, 2, "ntk"), ["without the exponent d / (d - 2)"]),
    "ntk_inverse_exponent": ((4, 8, 10000.0, 2.0, 2, "ntk"), ["the exponent upside down"]),
    "ntk_divides_base": ((4, 8, 10000.0, 2.0, 2, "ntk"), ["divided by the scale ** (d / (d - 2)) instead of multiplied"]),
    "ntk_plus_interpolation": ((4, 8, 10000.0, 2.0, 2, "ntk"), ["two rescalings where the method is one",
                                                                "positions divided by the factor as well"]),
    "dynamic_last_position": ((40, 8, 10000.0, 2.0, 16, "dynamic"), ["from the last position T - 1"]),
    "dynamic_unclamped": ((12, 8, 10000.0, 2.0, 16, "dynamic"), ["below the trained length"]),
    "dynamic_as_static": ((8, 8, 10000.0, 2.0, 16, "dynamic"), ["static NTK, not dynamic"]),
    "llama3_bands_swapped": ((3, 8, 10000.0, 4.0, 64, "llama3"), ["the high-frequency band is kept, never divided"]),
    "llama3_no_two_pi": ((3, 8, 10000.0, 4.0, 16, "llama3"), ["1 / w, positions per radian"]),
}


@pytest.mark.parametrize("name", PITFALLS)
def test_the_properties_say_what_each_known_mistake_is(name):
    (T, d, base, s, L, method), words = WHAT_THE_PROPERTIES_SAY[name]
    args = {"seed": 0, "T": T, "head_dim": d, "base": base, "factor": s, "original_max_len": L, "method": method}
    said = " ".join(filter(None, (check(args, variant(name, T, d, base, s, L, method)) for check in CHECKS)))
    for w in words:
        assert w in said, (name, said)


def test_the_properties_name_positions_from_one_a_nan_and_rising_frequencies():
    args = {"seed": 0, "T": 4, "head_dim": 8, "base": 10000.0, "factor": 2.0, "original_max_len": 2, "method": "ntk"}
    out = reference(4, 8, 10000.0, 2.0, 2, "ntk")
    shifted = np.concatenate([out[1:], 4 * out[1:2]])  # positions 1 .. T
    assert "positions 1 .. T" in PROPERTIES.linear_in_position(args, shifted)
    assert "always finite" in PROPERTIES.linear_in_position(args, np.where(out == 0, np.nan, out))
    assert "must fall" in PROPERTIES.frequencies_decrease(args, out[:, ::-1].copy())
    dyn = {**args, "method": "dynamic", "T": 40, "original_max_len": 16}
    no_offset = variant("dynamic_as_static", 40, 8, 10000.0, 5.0, 16, "dynamic")  # alpha 5 = 2 * 40 / 16
    assert "without the - (factor - 1)" in PROPERTIES.ntk_lowest_frequency(dyn, no_offset)


def test_every_property_sentence_is_one_line():
    for name in PROBLEM.variants("pitfalls"):
        (T, d, base, s, L, method), _ = WHAT_THE_PROPERTIES_SAY[name]
        args = {"seed": 0, "T": T, "head_dim": d, "base": base, "factor": s, "original_max_len": L, "method": method}
        for check in CHECKS:
            said = check(args, variant(name, T, d, base, s, L, method))
            assert said is None or ("\n" not in said and re.match(r"^[a-z]", said)), (name, said)


# -- the generated inputs -----------------------------------------------------------------------------------

@settings(max_examples=200, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_stay_in_the_stated_domain(args):
    assert set(args) == {"seed", "T", "head_dim", "base", "factor", "original_max_len", "method"}
    assert args["seed"] == 0
    assert type(args["T"]) is int and args["T"] in (1, 4, 8, 16, 17, 40, 64)
    assert type(args["head_dim"]) is int and args["head_dim"] in (4, 6, 8, 16, 32, 64)
    assert type(args["base"]) is float and args["base"] in (100.0, 10000.0, 500000.0)
    assert type(args["factor"]) is float and args["factor"] in (1.0, 2.0, 2.5, 4.0, 8.0)
    assert type(args["original_max_len"]) is int and args["original_max_len"] in (2, 8, 16, 32, 64)
    assert args["method"] in METHODS
    PROBLEM.check_args(args)  # the string kind takes it


def test_the_worked_example_s_sizes_come_first_and_dynamic_is_drawn_on_both_sides():
    first = PROBLEM.examples[0].args
    assert (STRATEGIES.SEQ_LENS[0], STRATEGIES.HEAD_DIMS[0], STRATEGIES.BASES[0], STRATEGIES.FACTORS[0],
            STRATEGIES.ORIGINAL_LENS[0], STRATEGIES.METHODS[0]) == (
        first["T"], first["head_dim"], first["base"], first["factor"], first["original_max_len"], first["method"])
    assert min(STRATEGIES.HEAD_DIMS) == 4 and all(d % 2 == 0 for d in STRATEGIES.HEAD_DIMS)
    assert max(STRATEGIES.SEQ_LENS) == 64 and 1 in STRATEGIES.SEQ_LENS and 1.0 in STRATEGIES.FACTORS
    assert any(s != round(s) for s in STRATEGIES.FACTORS)  # a factor rounded to a whole number fails
    drawn = []

    @settings(max_examples=PROBLEM.max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(PROBLEM.strategy())
    def collect(args):
        drawn.append(args)

    collect()
    dynamic = [(a["T"], a["original_max_len"]) for a in drawn if a["method"] == "dynamic"]
    assert any(T > L for T, L in dynamic) and any(T <= L for T, L in dynamic)
    assert {a["method"] for a in drawn if a["factor"] != 1.0 and a["T"] > 1} == set(METHODS)


def test_the_examples_show_every_method_and_dynamic_at_and_past_the_trained_length():
    shown = [(ex.args["method"], ex.args["T"], ex.args["original_max_len"], ex.args["head_dim"]) for ex in PROBLEM.examples]
    assert {m for m, *_ in shown} == set(METHODS)
    assert ("dynamic", 17, 16, 8) in shown and any(m == "dynamic" and T < L for m, T, L, _ in shown)
    assert any(m == "dynamic" and T == L for m, T, L, _ in shown) and ("ntk", 3, 8, 4) in shown
