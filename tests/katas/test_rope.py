"""rope: the reference is the paper's rotation (its block-diagonal matrix, and Meta's complex form), in both pair
layouts; the two layouts are one rotation reordered (the conversion of Meta's q and k kernels to Hugging Face's);
the known mistakes are the conventions the statement says they are; the properties hold on the reference and
name what they claim to; and the generated inputs are what the statement promises.

Everything runs in this process, starting nothing (`grade check rope`, run by tests/instructor/test_check.py,
covers the variants and alternatives through the grader; benchmarks/feedback.py grades the corpus). The
reference runs under jax.jit with seed, offset and interleaved static and x and base traced, as a grading
worker runs it.
"""

import functools

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from peers import even_first, rotation
from grader.problem import problems

SLUG = "rope"
PROBLEM = problems.load(ROOT, SLUG)
REFERENCE = problems.load_module(PROBLEM.reference, "rope_reference_under_test")
STRATEGIES = problems.load_module(PROBLEM.folder / "strategies.py", "rope_strategies_under_test")
PROPERTIES = PROBLEM.properties()
CHECKS = PROPERTIES.PROPERTIES
RTOL = ATOL = 1e-4  # problem.toml's tolerance


def paper_matrix(p, d, base, interleaved):
    """(d, d) float64: Su et al.'s R^d_(Theta, p) (peers.rotation); for the half-split layout the same matrix with
    its rows and columns reordered (pair i on features i and i + d/2)."""
    R = rotation(p, d, base)
    if interleaved:
        return R
    P = np.eye(d)[even_first(d)]  # (P @ v) = v[even_first(d)]
    return P @ R @ P.T


def paper(x, offset, base, interleaved):
    """(T, H, d) float64: row t of every head multiplied by R(offset + t)."""
    x = np.asarray(x, dtype=np.float64)
    T, H, d = x.shape
    R = np.stack([paper_matrix(offset + t, d, base, interleaved) for t in range(T)])  # (T, d, d)
    return np.einsum("tij,thj->thi", R, x)


def complex_form(x, offset, base, interleaved, sign=1.0):
    """(T, H, d) float64: Meta's form, each pair read as a + ib and multiplied by exp(i p theta_k)."""
    x = np.asarray(x, dtype=np.float64)
    T, H, d = x.shape
    a, b = (x[..., 0::2], x[..., 1::2]) if interleaved else (x[..., : d // 2], x[..., d // 2:])
    theta = base ** (-np.arange(0, d, 2) / d)
    z = (a + 1j * b) * np.exp(sign * 1j * np.outer(offset + np.arange(T), theta))[:, None, :]
    out = np.empty_like(x)
    if interleaved:
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
    else:
        out[..., : d // 2], out[..., d // 2:] = z.real, z.imag
    return out


@functools.cache
def jitted(path):
    module = problems.load_module(path, f"rope_{path.parent.name}_{path.stem}")
    return jax.jit(module.rope, static_argnums=(0, 2, 4))


@functools.cache
def eager(path):
    return problems.load_module(path, f"rope_{path.parent.name}_{path.stem}_eager").rope


def run(path, x, offset, base, interleaved):
    """(T, H, d) numpy: the module at ``path`` on those arguments, jitted as in grading (eagerly, as the grader
    then does, where it cannot run under jit: NumPy and loops)."""
    x = np.asarray(x, dtype=np.float32)
    try:
        out = np.asarray(jitted(path)(0, x, offset, base, interleaved))
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        out = np.asarray(eager(path)(0, x, offset, base, interleaved))
    assert out.dtype == np.float32 and out.shape == (x.size,)
    return out.reshape(x.shape)


def reference(x, offset, base, interleaved):
    return run(PROBLEM.reference, x, offset, base, interleaved)


def variant(name, x, offset, base, interleaved):
    return run(PROBLEM.variants("pitfalls")[name], x, offset, base, interleaved)


def fraction_of_tolerance(actual, expected):
    return float(np.max(np.abs(actual - expected) / (ATOL + RTOL * np.abs(expected))))


def within_tolerance(actual, expected):
    return actual.shape == expected.shape and fraction_of_tolerance(actual, expected) <= 1.0


def random_x(T, H, d, seed=0, scale=1.0):
    return (np.random.default_rng(seed).uniform(-1, 1, (T, H, d)) * scale).astype(np.float32)


EX = {ex.name.split(":")[0]: ex for ex in PROBLEM.examples}
X1 = np.asarray(PROBLEM.examples[0].args["x"], dtype=np.float32)  # examples 1 to 3: (3, 1, 4), base 100


# -- the reference against the paper ------------------------------------------------------------------------

@pytest.mark.parametrize("example", PROBLEM.examples, ids=[ex.name.split(":")[0][:40] for ex in PROBLEM.examples])
def test_the_worked_examples_are_the_paper_s_rotation(example):
    args = {k: example.args[k] for k in ("x", "offset", "base", "interleaved")}
    exact = paper(**args)
    np.testing.assert_allclose(complex_form(**args), exact, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(example.expected, dtype=np.float64), exact, rtol=0, atol=6e-7)
    np.testing.assert_allclose(reference(**args), exact, rtol=0, atol=5e-7)


@settings(max_examples=30, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 40), st.integers(1, 5), st.integers(1, 64), st.floats(1.5, 2e6), st.booleans(),
       st.sampled_from([1e-3, 1.0, 50.0]), st.data())
def test_the_reference_is_the_paper_s_rotation_off_the_menus(T, H, pairs, base, interleaved, scale, data):
    """Sizes, bases and scales the strategy never draws (any T up to 40, H up to 5, even d up to 128, any base
    from 1.5, values up to 50), positions below 128: float32's rounding of the angles alone (about p * 1e-7 rad,
    times the size of x), within a tenth of the tolerance for values up to 1."""
    offset = data.draw(st.integers(0, 128 - T))
    x = random_x(T, H, 2 * pairs, seed=T * 131 + pairs, scale=scale)
    out = reference(x, offset, base, interleaved)
    exact = paper(x, offset, base, interleaved)
    np.testing.assert_allclose(complex_form(x, offset, base, interleaved), exact, rtol=0, atol=1e-9 * scale)
    assert np.max(np.abs(out - exact)) <= 1.5e-7 * scale * (offset + T + 8)
    if scale <= 1:  # the stated domain's scale: larger values make the angles' rounding larger in proportion
        assert fraction_of_tolerance(out, exact) < 0.1


@pytest.mark.parametrize("name", sorted(PROBLEM.variants("alternatives")))
def test_every_alternative_is_the_paper_s_rotation(name):
    path = PROBLEM.variants("alternatives")[name]
    for (T, H, d, offset, base), interleaved in zip(
            [(3, 1, 4, 0, 100.0), (4, 4, 6, 64, 17.5), (33, 1, 64, 64, 500000.0), (1, 2, 2, 5, 10000.0),
             (7, 3, 10, 90, 2.5), (16, 2, 128, 1, 1e6)], [False, True, False, True, True, False]):
        x = random_x(T, H, d, seed=T + d)
        assert fraction_of_tolerance(run(path, x, offset, base, interleaved), paper(x, offset, base, interleaved)) < 0.1


def test_the_helpers_are_the_stub_s_parts_and_the_reference_s_steps():
    assert PROBLEM.helpers() == ["inverse_frequencies", "angles", "rotate_half", "rotate_pairs"]
    np.testing.assert_allclose(REFERENCE.inverse_frequencies(8, 10000.0), [1, 0.1, 0.01, 0.001], rtol=2e-7)
    np.testing.assert_allclose(REFERENCE.angles(3, 5, 4, 100.0), [[5, 0.5], [6, 0.6], [7, 0.7]], rtol=2e-7)
    v = np.arange(1.0, 7.0, dtype=np.float32)  # (1, 2, 3, 4, 5, 6)
    assert np.array_equal(REFERENCE.rotate_half(v), [-4, -5, -6, 1, 2, 3])
    assert np.array_equal(REFERENCE.rotate_pairs(v), [-2, 1, -4, 3, -6, 5])


# -- the two layouts are one rotation, reordered ------------------------------------------------------------

@pytest.mark.parametrize("d", [2, 4, 6, 16, 64])
def test_interleaved_rope_is_half_split_rope_with_each_head_s_features_reordered(d):
    """The statement's identity: rope(x, interleaved)[..., P] == rope(x[..., P], half-split), P = 0, 2, .., 1, 3, .."""
    x = random_x(9, 3, d, seed=d)
    P = even_first(d)
    for offset, base in ((0, 10000.0), (64, 17.5)):
        np.testing.assert_allclose(paper(x, offset, base, True)[..., P], paper(x[..., P], offset, base, False),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(reference(x, offset, base, True)[..., P], reference(x[..., P], offset, base, False),
                                   rtol=0, atol=2e-6)


def hf_permute(w, n_heads):
    """Hugging Face's convert_llama_weights_to_hf.permute, in NumPy, on a torch-layout (out, in) weight: within
    each head, the rows of each (x_2k, x_(2k+1)) pair are split into the two halves."""
    dim1, dim2 = w.shape
    return w.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(0, 2, 1, 3).reshape(dim1, dim2)


def test_meta_s_kernels_with_interleaved_rope_give_the_scores_of_hf_s_permuted_kernels_with_half_split_rope():
    """Meta's interleaved q and k against Hugging Face's conversion: the q and k columns reordered within each head
    (its permute), rotated half-split, give the same rotated features reordered, hence the same attention scores."""
    T, D, H = 7, 24, 3
    dh = D // H
    rng = np.random.default_rng(1)
    x = rng.normal(size=(T, D))
    wq, wk = rng.normal(size=(D, D)) / np.sqrt(D), rng.normal(size=(D, D)) / np.sqrt(D)  # Flax kernels (in, out)
    columns = np.concatenate([h * dh + even_first(dh) for h in range(H)])  # P within each head
    for w in (wq, wk):  # HF's permute of the torch-layout weight is this column reordering of the kernel
        assert np.array_equal(hf_permute(w.T, H).T, w[:, columns])
    for offset, base in ((0, 10000.0), (5, 500000.0)):
        q_meta = reference((x @ wq).reshape(T, H, dh), offset, base, True)  # (T, H, dh)
        k_meta = reference((x @ wk).reshape(T, H, dh), offset, base, True)
        q_hf = reference((x @ wq[:, columns]).reshape(T, H, dh), offset, base, False)
        k_hf = reference((x @ wk[:, columns]).reshape(T, H, dh), offset, base, False)
        np.testing.assert_allclose(q_hf, q_meta[..., even_first(dh)], rtol=0, atol=1e-5)
        scores_meta = np.einsum("qhd,khd->hqk", q_meta, k_meta)
        scores_hf = np.einsum("qhd,khd->hqk", q_hf, k_hf)
        np.testing.assert_allclose(scores_hf, scores_meta, rtol=0, atol=1e-4)
        unpermuted = np.einsum("qhd,khd->hqk", reference((x @ wq).reshape(T, H, dh), offset, base, False),
                               reference((x @ wk).reshape(T, H, dh), offset, base, False))
        assert np.max(np.abs(unpermuted - scores_meta)) > 0.1  # Meta's kernels rotated half-split: other scores


def test_the_statement_s_numbers_for_the_identity():
    row = np.asarray([[[0.5, -1.0, 2.0, 0.25]]])  # example 2's third row, at position 2
    interleaved = paper(row, 2, 100.0, True)[0, 0]
    half = paper(row[..., even_first(4)], 2, 100.0, False)[0, 0]
    np.testing.assert_allclose(interleaved, [0.701224, 0.870796, 1.910466, 0.642355], atol=5e-7)
    np.testing.assert_allclose(half, [0.701224, 1.910466, 0.870796, 0.642355], atol=5e-7)


def test_a_query_and_a_key_s_score_depends_on_their_distance_alone():
    """The paper's q_m . k_n = q^T R(n - m) k, in both layouts: the score follows n - m, not m and n."""
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(1, 1, 16)), rng.normal(size=(1, 1, 16))
    for interleaved in (False, True):
        for m, n in ((0, 0), (7, 5), (30, 28), (3, 40), (90, 1)):
            score = float(paper(q, m, 10000.0, interleaved).ravel() @ paper(k, n, 10000.0, interleaved).ravel())
            relative = float(q.ravel() @ paper_matrix(n - m, 16, 10000.0, interleaved) @ k.ravel())
            assert score == pytest.approx(relative, abs=1e-9)


# -- the known mistakes are the conventions the statement names -----------------------------------------------

STATEMENT_ROWS = {  # (variant, example, row) -> the row as the statement prints it
    (None, 0, 1): [0.540302, -0.099833, 0.841471, 0.995004],
    (None, 1, 1): [0.540302, 0.841471, -0.099833, 0.995004],
    ("interleaved_when_half", 0, 1): [0.540302, 0.841471, -0.099833, 0.995004],
    ("half_when_interleaved", 1, 1): [0.540302, -0.099833, 0.841471, 0.995004],
    ("layouts_swapped", 0, 1): [0.540302, 0.841471, -0.099833, 0.995004],
    ("layouts_swapped", 1, 1): [0.540302, -0.099833, 0.841471, 0.995004],
    ("mixed_layout", 0, 1): [0.540302, -0.841471, 0.099833, 0.995004],
    ("mixed_layout_interleaved", 1, 1): [0.540302, 0.099833, -0.841471, 0.995004],
    ("negative_angle", 0, 1): [0.540302, 0.099833, -0.841471, 0.995004],
    ("missing_factor_two", 0, 2): [-2.026668, -0.954360, -0.377645, -0.389483],
    ("positions_from_one", 0, 0): [0.540302, -0.099833, 0.841471, 0.995004],
    ("base_ignored", 0, 1): [0.540302, -0.010000, 0.841471, 0.999950],
    ("head_axis_as_position", 0, 1): [1, 0, 0, 1],
    ("head_axis_as_position", 0, 2): [0.5, -1, 2, 0.25],
    ("offset_ignored", 2, 0): [1, 0, 0, 1],
}


@pytest.mark.parametrize("key", sorted(STATEMENT_ROWS, key=str))
def test_the_rows_the_statement_and_the_messages_print(key):
    name, example, row = key
    args = {k: PROBLEM.examples[example].args[k] for k in ("x", "offset", "base", "interleaved")}
    out = reference(**args) if name is None else variant(name, **args)
    np.testing.assert_allclose(out[row, 0], STATEMENT_ROWS[key], rtol=0, atol=6e-7)


def mixed(x, offset, base, partner_interleaved):
    """The partner of one layout with cos and sin laid out for the other, in float64."""
    T, H, d = x.shape
    phase = np.outer(offset + np.arange(T), base ** (-np.arange(0, d, 2) / d))
    if partner_interleaved:  # rotate_every_two with cat(freqs, freqs)
        cos, sin = np.tile(np.cos(phase), 2), np.tile(np.sin(phase), 2)
        partner = np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)
    else:  # rotate_half with repeat_interleave'd freqs
        cos, sin = np.repeat(np.cos(phase), 2, axis=-1), np.repeat(np.sin(phase), 2, axis=-1)
        partner = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * cos[:, None, :] + partner * sin[:, None, :]


def by_head(x, offset, base, interleaved):
    """Element (t, h) turned as position offset + h, in float64."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    return np.stack([x[:, h] @ paper_matrix(offset + h, d, base, interleaved).T for h in range(x.shape[1])], axis=1)


@pytest.mark.parametrize("T, H, d, offset, base", [(3, 1, 4, 0, 100.0), (4, 4, 6, 5, 17.5), (16, 2, 64, 64, 500000.0),
                                                   (2, 2, 2, 1, 10000.0)])
def test_each_known_mistake_is_the_convention_it_claims(T, H, d, offset, base):
    x = random_x(T, H, d, seed=d + offset)
    for interleaved in (False, True):
        claims = {
            "interleaved_when_half": paper(x, offset, base, True),
            "half_when_interleaved": paper(x, offset, base, False),
            "layouts_swapped": paper(x, offset, base, not interleaved),
            "mixed_layout": mixed(x, offset, base, False) if not interleaved else paper(x, offset, base, True),
            "mixed_layout_interleaved": mixed(x, offset, base, True) if interleaved else paper(x, offset, base, False),
            "negative_angle": complex_form(x, offset, base, interleaved, sign=-1.0),
            "missing_factor_two": complex_form(x, offset, base ** 0.5, interleaved),  # sqrt(base) ** (-2k/d)
            "offset_ignored": paper(x, 0, base, interleaved),
            "positions_from_one": paper(x, offset + 1, base, interleaved),
            "base_ignored": paper(x, offset, 10000.0, interleaved),
            "head_axis_as_position": by_head(x, offset, base, interleaved),
        }
        for name, claim in claims.items():
            assert fraction_of_tolerance(variant(name, x, offset, base, interleaved), claim) < 0.1, (name, interleaved)


def test_one_pair_hides_the_layout_and_frequency_mistakes_and_every_mistake_shows_past_it():
    """The statement's Input domain: with d = 2 the layouts coincide and the base has no effect; with d = 6, T = H
    and offset > 0 every known mistake shows, each on its own flag."""
    hidden_at_2 = {"interleaved_when_half", "half_when_interleaved", "layouts_swapped", "mixed_layout",
                   "mixed_layout_interleaved", "missing_factor_two", "base_ignored"}
    shows_on = {"interleaved_when_half": [False], "mixed_layout": [False],
                "half_when_interleaved": [True], "mixed_layout_interleaved": [True]}
    for name in PROBLEM.variants("pitfalls"):
        x2 = random_x(4, 4, 2, seed=3)
        for interleaved in (False, True):
            same = within_tolerance(variant(name, x2, 5, 17.5, interleaved), reference(x2, 5, 17.5, interleaved))
            assert same == (name in hidden_at_2), (name, interleaved)
        x6 = random_x(4, 4, 6, seed=4)
        for interleaved in (False, True):
            wrong = variant(name, x6, 64, 17.5, interleaved)
            differs = not within_tolerance(wrong, reference(x6, 64, 17.5, interleaved))
            assert differs == (interleaved in shows_on.get(name, [False, True])), (name, interleaved)


def test_offset_zero_hides_the_offset_mistake_and_base_10000_the_base_mistake():
    x = random_x(7, 3, 8, seed=5)
    assert np.array_equal(variant("offset_ignored", x, 0, 17.5, True), reference(x, 0, 17.5, True))
    assert np.array_equal(variant("base_ignored", x, 5, 10000.0, False), reference(x, 5, 10000.0, False))


@functools.cache
def worst_error_by_position(name, T, H, dims, bases):
    """(T,) float64: the worst |error| of a module's rows at positions 0 .. T - 1 against the complex form (the
    paper's rotation, vectorised), over the head dimensions, bases and both layouts: one compile per d and layout."""
    worst = np.zeros(T)
    for d in dims:
        x = random_x(T, H, d, seed=d)
        for base in bases:
            for interleaved in (False, True):
                out = reference(x, 0, base, interleaved) if name is None else variant(name, x, 0, base, interleaved)
                error = np.abs(out - complex_form(x, 0, base, interleaved))
                worst = np.maximum(worst, error.reshape(T, -1).max(axis=1))
    return worst


@pytest.mark.parametrize("first, last, low, high", [(0, 15, 0.03, 0.09), (0, 64, 0.15, 0.3), (64, 96, 0.3, 0.5),
                                                    (200, 256, 0.7, 1.5)])
def test_the_floating_point_note_s_bfloat16_figures(first, last, low, high):
    """bfloat16 angles: off by about 0.06 below position 16, 0.2 by 64, 0.4 by 96, about 1 past 200."""
    worst = worst_error_by_position("bfloat16_angles", 257, 2, (4, 64, 128), (100.0, 10000.0, 500000.0, 17.5))
    assert low < worst[first:last + 1].max() < high


@pytest.mark.parametrize("first, last, bound", [(0, 127, 1e-5), (1000, 1099, 1e-4), (4000, 4099, 4e-4)])
def test_the_floating_point_note_s_float32_figures(first, last, bound):
    """A float32 rotation is within 1e-5 of the exact one below position 128, 1e-4 near 1000, 3e-4 near 4000 (where
    it leaves the tolerance: why generated positions stay below 128)."""
    worst = worst_error_by_position(None, 4100, 1, (4, 64, 128), (100.0, 10000.0, 500000.0))[first:last + 1].max()
    assert worst < bound
    if first >= 4000:
        assert worst > ATOL


# -- the properties -----------------------------------------------------------------------------------------

def equal_rows(T, H, d, seed):
    return np.repeat(random_x(1, H, d, seed=seed), T, axis=0)


@pytest.mark.parametrize("T, H, d", [(1, 1, 2), (3, 1, 4), (4, 4, 6), (16, 2, 64), (33, 1, 8), (7, 3, 2)])
def test_the_reference_has_every_property(T, H, d):
    for x in (random_x(T, H, d, seed=T), equal_rows(T, H, d, seed=d), np.zeros((T, H, d), np.float32)):
        for offset in (0, 1, 64, 90):
            for base in (100.0, 17.5, 500000.0):
                for interleaved in (False, True):
                    args = {"seed": 0, "x": x, "offset": offset, "base": base, "interleaved": interleaved}
                    out = reference(x, offset, base, interleaved)
                    assert [check(args, out) for check in CHECKS] == [None] * len(CHECKS), args


WHAT_THE_PROPERTIES_SAY = {  # known mistake -> its flag and words the properties' sentences must hold
    "interleaved_when_half": (False, ["the interleaved pairs (2k, 2k + 1) keep their lengths instead"]),
    "half_when_interleaved": (True, ["the half-split pairs (k, k + d/2) keep their lengths instead"]),
    "layouts_swapped": (False, ["the interleaved pairs (2k, 2k + 1) keep their lengths instead"]),
    "mixed_layout": (False, ["repeated pair by pair", "which is no rotation"]),
    "mixed_layout_interleaved": (True, ["in halves", "which is no rotation"]),
    "negative_angle": (False, ["turned by -3 rad, backwards", "the rotation's sign is flipped"]),
    "missing_factor_two": (True, ["factor 2 is missing"]),
    "offset_ignored": (False, ["the offset left out"]),
    "positions_from_one": (True, ["positions counted from 1"]),
    "base_ignored": (False, ["base = 17.5 is ignored"]),
    "head_axis_as_position": (True, ["read off the head axis"]),
    "bfloat16_angles": (False, ["not even the same from row to row"]),
}


@pytest.mark.parametrize("name", sorted(PROBLEM.variants("pitfalls")))
def test_the_properties_say_what_each_known_mistake_is(name):
    interleaved, wanted = WHAT_THE_PROPERTIES_SAY[name]
    x = equal_rows(6, 3, 8, seed=11)
    offset = 90 if name == "bfloat16_angles" else 3
    args = {"seed": 0, "x": x, "offset": offset, "base": 17.5, "interleaved": interleaved}
    said = " ".join(filter(None, (check(args, variant(name, x, offset, 17.5, interleaved)) for check in CHECKS)))
    for words in wanted:
        assert words in said, (name, said)


def test_relative_dot_names_outputs_whose_dot_products_do_not_follow_the_distance():
    x = equal_rows(5, 1, 4, seed=7)
    args = {"seed": 0, "x": x, "offset": 0, "base": 100.0, "interleaved": False}
    out = reference(x, 0, 100.0, False).copy()
    out[3] = reference(x[:1], 7, 100.0, False)[0]  # row 3 turned as position 7: still a rotation, another distance
    assert "depends on their distance alone" in PROPERTIES.relative_dot(args, out)
    assert PROPERTIES.pair_norms_kept(args, out) is None


def rotated_with(x, offset, theta, interleaved):
    """x turned RoPE's way with the frequencies ``theta`` (d/2,), in float64."""
    T, H, d = x.shape
    a, b = (x[..., 0::2], x[..., 1::2]) if interleaved else (x[..., : d // 2], x[..., d // 2:])
    phase = np.outer(offset + np.arange(T), theta)[:, None, :]
    c, s = a * np.cos(phase) - b * np.sin(phase), b * np.cos(phase) + a * np.sin(phase)
    out = np.empty(x.shape)
    if interleaved:
        out[..., 0::2], out[..., 1::2] = c, s
    else:
        out[..., : d // 2], out[..., d // 2:] = c, s
    return out.astype(np.float32)


@pytest.mark.parametrize("theta, words", [
    (17.0 ** (-2.0 * np.arange(4) / 8), "the base 17.5 is cut to a whole number"),
    (17.5 ** (-2.0 * np.arange(1, 5) / 8), "the exponent counts pairs from 1"),
    (17.5 ** (2.0 * np.arange(4) / 8), "growing with k"),
])
def test_the_angle_step_names_other_frequency_mistakes(theta, words):
    x = equal_rows(5, 2, 8, seed=8)
    args = {"seed": 0, "x": x, "offset": 1, "base": 17.5, "interleaved": True}
    assert words in PROPERTIES.angle_step(args, rotated_with(x.astype(np.float64), 1, theta, True))


# -- the generated inputs -----------------------------------------------------------------------------------

@settings(max_examples=200, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_stay_in_the_stated_domain(args):
    x = args["x"]
    T, H, d = x.shape
    assert args["seed"] == 0 and type(args["offset"]) is int and type(args["interleaved"]) is bool
    assert type(args["base"]) is float and args["base"] in (100.0, 10000.0, 500000.0, 17.5)
    assert x.dtype == np.float32 and (T, H) in STRATEGIES.SIZES and d in (2, 4, 6, 8, 16, 64)
    assert np.all(np.abs(x) <= 1.0) and args["offset"] in (0, 1, 5, 64)
    assert args["offset"] + T - 1 <= 96 < 128


def test_the_worked_example_s_sizes_come_first_and_the_menus_vary_every_size():
    first = PROBLEM.examples[0].args
    T, H, d = np.asarray(first["x"]).shape
    assert (STRATEGIES.SIZES[0], STRATEGIES.HEAD_DIMS[0], STRATEGIES.OFFSETS[0], STRATEGIES.BASES[0]) == (
        (T, H), d, first["offset"], first["base"])
    assert STRATEGIES.MAX_POSITION == 96
    assert any(T == H > 1 for T, H in STRATEGIES.SIZES)  # where angles broadcast along the heads run silently
    assert 2 in STRATEGIES.HEAD_DIMS and any(d >= 4 and (d // 2) % 2 for d in STRATEGIES.HEAD_DIMS)
    assert any(b != int(b) for b in STRATEGIES.BASES) and 10000.0 in STRATEGIES.BASES
    assert 0 in STRATEGIES.OFFSETS and max(STRATEGIES.OFFSETS) > 0


def test_every_generated_draw_kind_comes_up():
    """Both flags, equal rows in about one draw in four, T = H, d = 2 and d >= 4, offsets above 0, a fractional base."""
    seen = []

    @settings(max_examples=200, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(PROBLEM.strategy())
    def draw(args):
        seen.append(args)

    draw()
    equal = [bool(a["x"].shape[0] > 1 and np.all(a["x"] == a["x"][:1])) for a in seen]
    assert 0.1 < np.mean(equal) < 0.45
    assert {a["interleaved"] for a in seen} == {False, True}
    assert any(a["x"].shape[0] == a["x"].shape[1] > 1 for a in seen)
    assert {a["base"] for a in seen} == set(STRATEGIES.BASES) and {a["offset"] for a in seen} == set(STRATEGIES.OFFSETS)
    assert {a["x"].shape[2] for a in seen} == set(STRATEGIES.HEAD_DIMS)
