"""alibi_attention: the reference is the paper's layer, the forms of the bias the statement accepts give its
output, the known mistakes are what their messages say, and the generated inputs are what the statement
promises.

Everything runs in this process and starts nothing (`grade check alibi_attention`, run by
tests/instructor/test_check.py, grades the variants and the alternatives through the grader). The paper's
layer is written here in float64 NumPy on the reference's parameters: the slopes by the recursion of the
ALiBi repository's get_slopes, the bias as the paper's figure draws it (-m (i - j) where j <= i), the
softmax over the keys a query may see. The reference runs under jax.jit with seed and num_heads static, as a
grading worker runs it.
"""

import functools
import json
import math

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from peers import get_slopes
from grader.problem import problems

SLUG = "alibi_attention"
PROBLEM = problems.load(ROOT, SLUG)
REFERENCE = problems.load_module(PROBLEM.reference, "alibi_attention_reference_under_test")
STRATEGIES = problems.load_module(PROBLEM.folder / "strategies.py", "alibi_attention_strategies_under_test")
CONFIGS = STRATEGIES.CONFIGS  # (seed, T, D, num_heads)
RTOL, ATOL = 1e-4, 1e-5  # problem.toml's tolerance
# A float32 layer against the float64 one, as a fraction of the tolerance: up to 0.12 on the menu with x up to 3
# (a few cells where the output nearly cancels, so that atol is all the tolerance there), whichever form of
# the bias it writes; the known mistakes, where they show, land 48 times the tolerance away or more.
FLOAT32 = 0.2
GOLDEN = json.loads((PROBLEM.solution_folder / "golden.json").read_text())


@functools.cache
def kernels(seed, D, H):
    """The reference's four (D, D) kernels for ``seed``, in float64."""
    variables = REFERENCE.AlibiAttention(D, H).init(jax.random.PRNGKey(seed), np.zeros((2, D), np.float32))
    return {name: np.asarray(variables["params"][name]["kernel"], np.float64) for name in "qkvo"}


def layer64(seed, x, H, *, slopes=None, bias=None, scale_bias=False, scale=True, mask=True, bias_after=False,
            softmax_axis=-1, merge="transpose"):
    """(T, D) float64: the paper's layer, or one of the changes the known mistakes make to it.

    ``bias(m, i, j)`` gives the bias of one cell from broadcast (H, 1, 1), (1, T, 1) and (1, 1, T) arrays;
    by default the paper's figure, -m (i - j) below the diagonal and 0 above it (the mask hides it)."""
    x = np.asarray(x, np.float64)
    T, D = x.shape
    hd = D // H
    p = kernels(seed, D, H)
    q, k, v = ((x @ p[n]).reshape(T, H, hd).transpose(1, 0, 2) for n in "qkv")  # (H, T, hd)
    m = np.asarray(get_slopes(H) if slopes is None else slopes, np.float64)[:, None, None]  # (H, 1, 1)
    i, j = np.arange(T)[None, :, None], np.arange(T)[None, None, :]
    b = np.where(j <= i, -m * (i - j), 0.0) if bias is None else bias(m, i, j) * np.ones((H, T, T))
    dots = q @ k.transpose(0, 2, 1)
    s = (dots + b) / math.sqrt(hd) if scale_bias else dots / (math.sqrt(hd) if scale else 1.0) + (0 if bias_after else b)
    visible = np.broadcast_to(j <= i, s.shape) if mask else np.ones(s.shape, bool)
    s = np.where(visible, s, -np.inf)
    w = np.exp(s - s.max(axis=softmax_axis, keepdims=True))
    w /= w.sum(axis=softmax_axis, keepdims=True)
    if bias_after:
        w = w + b
    out = w @ v  # (H, T, hd)
    merged = out.transpose(1, 0, 2).reshape(T, D) if merge == "transpose" else out.reshape(T, D)
    return merged @ p["o"]


RELATIVE = lambda m, i, j: m * (j - i)  # noqa: E731  (the reference's m (j - i) on the whole grid)


@functools.cache
def jitted(path):
    module = problems.load_module(path, f"alibi_attention_{path.parent.name}_{path.stem}")
    return jax.jit(module.alibi_attention, static_argnums=(0, 2))


def run(path, seed, x, H):
    """(T, D) numpy: the module at ``path`` on those arguments, jitted as in grading."""
    out = np.asarray(jitted(path)(seed, np.asarray(x, np.float32), H))
    assert out.dtype == np.float32 and out.shape == (x.size,)
    return out.reshape(x.shape)


def reference(seed, x, H):
    return run(PROBLEM.reference, seed, x, H)


def fraction_of_tolerance(actual, expected):
    return float(np.max(np.abs(actual - expected) / (ATOL + RTOL * np.abs(expected))))


def random_x(T, D, seed=0, scale=1.0):
    return (scale * np.random.default_rng(seed).uniform(-1, 1, (T, D))).astype(np.float32)


EXAMPLES = {ex.name: ex for ex in PROBLEM.examples}
ex_ids = [ex.name.split(":")[0][:40] for ex in PROBLEM.examples]


# -- the slopes and the bias ------------------------------------------------------------------------------------

def test_the_slopes_are_the_paper_s_for_every_number_of_heads():
    for H in range(1, 33):
        np.testing.assert_allclose(REFERENCE.alibi_slopes(H), get_slopes(H), rtol=1e-7, atol=0, err_msg=str(H))


def test_the_slopes_the_statement_prints():
    np.testing.assert_array_equal(REFERENCE.alibi_slopes(3), [1 / 16, 1 / 256, 1 / 4])
    np.testing.assert_array_equal(REFERENCE.alibi_slopes(6), [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8])
    np.testing.assert_allclose(REFERENCE.alibi_slopes(12)[8:], 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5]), rtol=1e-7)
    np.testing.assert_allclose(REFERENCE.alibi_slopes(16), 2.0 ** (-np.arange(1, 17) / 2), rtol=1e-7)
    naive = 2.0 ** (-8.0 * np.arange(1, 4) / 3)  # the power-of-two rule on 3 heads, as the statement says
    np.testing.assert_allclose(naive, [0.157, 0.0248, 0.0039], rtol=0, atol=5e-4)


def test_the_bias_is_m_times_key_minus_query_head_first():
    bias = np.asarray(REFERENCE.alibi_bias(4, 2))
    assert bias.shape == (2, 4, 4) and bias.dtype == np.float32
    np.testing.assert_array_equal(bias[0], [[0, .0625, .125, .1875], [-.0625, 0, .0625, .125],
                                            [-.125, -.0625, 0, .0625], [-.1875, -.125, -.0625, 0]])
    np.testing.assert_array_equal(bias[1], bias[0] / 16)
    i, j = np.arange(33)[:, None], np.arange(33)[None, :]
    np.testing.assert_allclose(REFERENCE.alibi_bias(33, 12), np.array(get_slopes(12))[:, None, None] * (j - i),
                               rtol=1e-6, atol=0)


def test_the_peers_slopes_are_the_paper_s():
    """BLOOM's _get_alibi_slopes and MPT's build_mpt_alibi_tensor, as the alternatives port them (each
    power of two, the numbers of heads around them, and the menu's)."""
    folder = PROBLEM.solution_folder / "alternatives"
    bloom = problems.load_module(folder / "hf_bloom_port.py", "alibi_attention_bloom_slopes")
    mpt = problems.load_module(folder / "hf_mpt_port.py", "alibi_attention_mpt_slopes")
    for H in (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32):
        np.testing.assert_allclose(bloom.get_alibi_slopes(H), get_slopes(H), rtol=1e-6, err_msg=str(H))
        np.testing.assert_allclose(np.asarray(mpt.build_mpt_alibi_tensor(H, 2))[:, 0, 0], -np.array(get_slopes(H)),
                                   rtol=1e-6, err_msg=str(H))


# -- the reference against the paper's layer --------------------------------------------------------------------

@pytest.mark.parametrize("example", PROBLEM.examples, ids=ex_ids)
def test_the_fixed_examples_are_the_paper_s_layer(example):
    a = example.args
    exact = layer64(a["seed"], a["x"], a["num_heads"])
    if example.expected is not None:
        np.testing.assert_allclose(np.asarray(example.expected, np.float64), exact, rtol=0, atol=5e-7)
    assert fraction_of_tolerance(reference(a["seed"], a["x"], a["num_heads"]), exact) < FLOAT32


@settings(max_examples=8, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from([(1, 1), (7, 2), (3, 5), (40, 6), (16, 9), (2, 24)]), st.integers(1, 4),
       st.sampled_from([0.3, 1.0, 4.0]), st.integers(0, 3))
def test_the_reference_is_the_paper_s_layer_off_the_menu(length_heads, head_dim, scale, seed):
    """Sizes and scales the strategy never draws (T up to 40, 1 to 24 heads, head_dim 1 to 4, x up to 4)."""
    T, H = length_heads
    x = random_x(T, H * head_dim, seed, scale)
    assert fraction_of_tolerance(reference(seed, x, H), layer64(seed, x, H)) < FLOAT32


def test_the_kernels_are_t5_attention_s_for_the_same_seed_and_width():
    """The statement: the four kernels of seed 0 are the ones t5_attention's worked example uses."""
    t5 = problems.load_module(problems.load(ROOT, "t5_attention").reference, "alibi_attention_t5_kernels")
    x = np.zeros((2, 4), np.float32)
    theirs = t5.T5Attention(4, 2, 8, 6, True).init(jax.random.PRNGKey(0), x)["params"]
    for name in "qkvo":
        np.testing.assert_array_equal(kernels(0, 4, 2)[name], np.asarray(theirs[name]["kernel"], np.float64))


# -- the statement's figures --------------------------------------------------------------------------------------

def worked_x():
    return EXAMPLES[PROBLEM.examples[0].name].args["x"]


def head0_query3(bias):
    """Head 0's scaled dot products and weights for query 3 of the first worked example, ``bias`` added."""
    p = kernels(0, 4, 2)
    x = worked_x().astype(np.float64)
    q, k = (x @ p["q"])[:, :2], (x @ p["k"])[:, :2]
    dots = k @ q[3] / math.sqrt(2)
    s = dots + bias
    w = np.exp(s - s.max())
    return dots, w / w.sum()


def test_the_worked_example_s_scores_and_weights():
    dots, weights = head0_query3(np.array([-0.1875, -0.125, -0.0625, 0.0]))
    np.testing.assert_allclose(dots, [0.1869, 0.1266, -0.3318, 0.0834], atol=5e-5)
    np.testing.assert_allclose(weights, [0.2657, 0.2662, 0.1792, 0.2889], atol=5e-5)
    np.testing.assert_allclose(head0_query3(np.zeros(4))[1], [0.2908, 0.2738, 0.1731, 0.2622], atol=5e-5)


def test_the_worked_example_s_other_rows():
    x = worked_x()
    plain = layer64(0, x, 2, bias=lambda m, i, j: 0 * m * (j - i))
    np.testing.assert_allclose(plain[3], [-0.016032, -0.012440, -0.218281, -0.138348], atol=5e-7)
    scaled = layer64(0, x, 2, scale_bias=True)
    np.testing.assert_allclose(scaled[3], [-0.0351, -0.0165, -0.2116, -0.1387], atol=5e-5)
    np.testing.assert_array_equal(reference(0, x, 2)[0], reference(0, x, 1)[0])  # query 0 sees itself only


def test_the_layer_runs_at_64_positions_and_far_keys_fade_by_the_slope():
    """The extrapolation note: no table, so T = 64 runs as it is; a key 63 back that is the query's twin gets
    exp(-63 m) of its weight: 0.02 in the steep head (1/16), 0.78 in the gentle one (1/256)."""
    x = random_x(64, 4, seed=5)
    x[0] = x[63]
    assert fraction_of_tolerance(reference(0, x, 2), layer64(0, x, 2)) < FLOAT32
    for m, ratio in ((1 / 16, 0.02), (1 / 256, 0.78)):
        assert abs(math.exp(-63 * m) - ratio) < 0.005


# -- the forms of the bias the layer accepts ----------------------------------------------------------------------

ACCEPTED = {
    "m (j - i) on the whole grid": RELATIVE,
    "m j rows (BLOOM)": lambda m, i, j: m * j + 0 * i,
    "m (j - (T - 1)) rows (MPT)": lambda m, i, j: m * (j - j.max()) + 0 * i,
    "-m |i - j|": lambda m, i, j: -m * np.abs(i - j),
    "lower triangle only": lambda m, i, j: np.where(j <= i, m * (j - i), 0.0),
}


@pytest.mark.parametrize("form", sorted(ACCEPTED))
@pytest.mark.parametrize("config", [(0, 4, 4, 2), (1, 20, 24, 12), (2, 7, 6, 3)], ids=str)
def test_every_accepted_form_is_the_paper_s_layer(form, config):
    seed, T, D, H = config
    x = random_x(T, D, seed, 3.0)
    np.testing.assert_allclose(layer64(seed, x, H, bias=ACCEPTED[form]), layer64(seed, x, H), rtol=1e-12, atol=1e-12)


def test_the_accepted_forms_differ_without_the_mask():
    """What makes them one is the mask: without it each is another layer."""
    x = random_x(6, 4, 1, 3.0)
    outs = [layer64(0, x, 2, bias=ACCEPTED[form], mask=False) for form in ("m (j - i) on the whole grid",
                                                                           "-m |i - j|", "lower triangle only")]
    assert not np.allclose(outs[0], outs[1]) and not np.allclose(outs[0], outs[2])
    np.testing.assert_allclose(layer64(0, x, 2, bias=ACCEPTED["m j rows (BLOOM)"], mask=False), outs[0], rtol=1e-12)


HOOKS = PROBLEM.hooks()  # solutions/alibi_attention/grading.py


def bias_in(form, slopes, T):
    """(H, T, T) float32: the helper alibi_bias's output written in ``form``."""
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    return np.stack([ACCEPTED[form](m, i, j) * np.ones((T, T)) for m in slopes]).astype(np.float32)


@pytest.mark.parametrize("form", sorted(ACCEPTED))
def test_a_helper_that_returns_an_accepted_form_agrees_with_the_reference_s_when_parts_are_compared(form):
    """Locating a failure part by part (and `--part alibi_bias`) compares the helper's bias in the terms the
    layer sees it: a form the layer accepts is never the first wrong part."""
    slopes, T = get_slopes(12), 9
    reference = HOOKS.canonical_part("alibi_bias", bias_in("m (j - i) on the whole grid", slopes, T))
    np.testing.assert_allclose(HOOKS.canonical_part("alibi_bias", bias_in(form, slopes, T)), reference, rtol=RTOL,
                               atol=ATOL)


@pytest.mark.parametrize("wrong", ["naive slopes", "sign flipped", "slopes reversed"])
def test_a_wrong_helper_still_differs_from_the_reference_s_when_parts_are_compared(wrong):
    slopes, T = get_slopes(12), 9
    changed = {"naive slopes": [2 ** (-8 * (h + 1) / 12) for h in range(12)],
               "sign flipped": [-m for m in slopes], "slopes reversed": slopes[::-1]}[wrong]
    reference = HOOKS.canonical_part("alibi_bias", bias_in("m j rows (BLOOM)", slopes, T))
    assert not np.allclose(HOOKS.canonical_part("alibi_bias", bias_in("m j rows (BLOOM)", changed, T)), reference,
                           rtol=RTOL, atol=ATOL)
    other = np.ones((2, 3), np.float32)  # any other part is compared as it is
    assert HOOKS.canonical_part("alibi_slopes", other) is other


@pytest.mark.parametrize("name", ["hf_bloom_port", "hf_mpt_port"])
def test_the_bloom_and_mpt_ports_are_the_paper_s_layer(name):
    """In float32, BLOOM's m j rows and MPT's rows stay far inside the tolerance (they differ from the
    reference's m (j - i) by a constant per row, which a softmax ignores, and by rounding)."""
    path = PROBLEM.variants("alternatives")[name]
    for seed, T, D, H in [(1, 33, 12, 4), (1, 20, 24, 12), (0, 40, 8, 4)]:
        x = random_x(T, D, seed, 3.0)
        assert fraction_of_tolerance(run(path, seed, x, H), layer64(seed, x, H)) < FLOAT32, (name, T, H)
        assert fraction_of_tolerance(run(path, seed, x, H), reference(seed, x, H)) < 0.1, (name, T, H)


# -- the known mistakes are what their messages say --------------------------------------------------------------

MISTAKES = {  # the change each known mistake makes to the paper's layer
    "bias_scaled": dict(bias=RELATIVE, scale_bias=True),
    "no_scaling": dict(scale=False),
    "bias_sign_flipped": dict(bias=lambda m, i, j: m * (i - j)),
    "naive_slopes": "naive",
    "slopes_reversed": "reversed",
    "no_causal_mask": dict(bias=RELATIVE, mask=False),
    "bias_after_softmax": dict(bias=RELATIVE, bias_after=True),
    "bias_reshaped_not_transposed": "reshaped",
    "softmax_over_queries": dict(softmax_axis=-2),
    "heads_merged_without_transpose": dict(merge="reshape"),
}


def mistaken(name, seed, x, H):
    change = MISTAKES[name]
    if change == "naive":
        return layer64(seed, x, H, slopes=2.0 ** (-8.0 * np.arange(1, H + 1) / H))
    if change == "reversed":
        return layer64(seed, x, H, slopes=get_slopes(H)[::-1])
    if change == "reshaped":
        T = x.shape[0]
        per_cell = (np.arange(T)[None, :] - np.arange(T)[:, None])[:, :, None] * np.array(get_slopes(H))  # (T, T, H)
        return layer64(seed, x, H, bias=lambda m, i, j: per_cell.reshape(H, T, T))
    return layer64(seed, x, H, **change)


def test_every_known_mistake_is_described_here():
    assert sorted(MISTAKES) == sorted(PROBLEM.variants("pitfalls"))


@pytest.mark.parametrize("entry", GOLDEN, ids=ex_ids)
def test_each_known_mistake_s_stored_output_is_the_change_its_message_names(entry):
    """golden.json keeps every variant's output on the fixed examples; each is the paper's layer with that one
    change, and differs from the reference's unless the example's sizes hide it (powers of two hide
    naive_slopes, one head hides the head order and layout)."""
    example = next(ex for ex in PROBLEM.examples if ex.name == entry["name"])
    seed, x, H = (example.args[k] for k in ("seed", "x", "num_heads"))
    hidden = {"naive_slopes"} if H & (H - 1) == 0 else set()
    if H == 1:
        hidden |= {"slopes_reversed", "bias_reshaped_not_transposed", "heads_merged_without_transpose"}
    right = np.asarray(entry["output"]).reshape(x.shape)
    for name, stored in entry["pitfalls"].items():
        out = np.asarray(stored["output"]).reshape(x.shape)
        assert fraction_of_tolerance(out, mistaken(name, seed, x, H)) < 0.05, name
        assert np.allclose(out, right, rtol=RTOL, atol=ATOL) == (name in hidden), name


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_every_configuration_but_the_one_head_ones_shows_the_mistakes_it_should(config):
    """On the menu, in float64: each known mistake is far outside the tolerance wherever the sizes let it
    show (naive_slopes only for heads not a power of two), so no wrong program of the list passes."""
    seed, T, D, H = config
    x = random_x(T, D, seed, 1.0)
    right = layer64(seed, x, H)
    for name in MISTAKES:
        shows = not ((name == "naive_slopes" and H & (H - 1) == 0) or (H == 1 and name in (
            "slopes_reversed", "bias_reshaped_not_transposed", "heads_merged_without_transpose")))
        assert (fraction_of_tolerance(mistaken(name, seed, x, H), right) > 10) == shows, name


# -- the property ---------------------------------------------------------------------------------------------------

def test_the_property_holds_on_the_reference_and_says_where_a_nan_row_comes_from():
    (finite,) = PROBLEM.properties().PROPERTIES
    for seed, T, D, H in CONFIGS:
        args = {"seed": seed, "x": random_x(T, D, seed, 3.0), "num_heads": H}
        assert finite(args, reference(seed, args["x"], H)) is None
    out = reference(0, worked_x(), 2).copy()
    out[0] = np.nan  # query 0 with its one key hidden too
    said = finite({"seed": 0, "x": worked_x(), "num_heads": 2}, out)
    assert said.startswith("row i=0 holds nan") and "j >= i instead of j > i" in said


# -- the generated inputs ------------------------------------------------------------------------------------------

@settings(max_examples=100, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_stay_in_the_stated_domain(args):
    x = args["x"]
    assert (args["seed"], *x.shape, args["num_heads"]) in CONFIGS
    assert x.dtype == np.float32 and np.abs(x).max() <= 3.0


def test_the_menu_makes_every_size_and_every_mistake_matter():
    assert [c for c in CONFIGS[:3]] == [(ex.args["seed"], *ex.args["x"].shape, ex.args["num_heads"])
                                        for ex in PROBLEM.examples]
    assert all(D % H == 0 and D // H > 1 for _, _, D, H in CONFIGS), "head_dim 1 hides the scaling mistakes"
    heads = {H for *_, H in CONFIGS}
    assert {H for H in heads if H & (H - 1)} >= {3, 6, 12}, "non-powers of two show naive_slopes"
    assert max(heads) > 8 and 1 in heads
    for i, name in enumerate(("seed", "T", "D", "num_heads")):
        assert len({c[i] for c in CONFIGS}) >= 3, f"{name} takes too few values"
    assert len({D // H for _, _, D, H in CONFIGS}) >= 3
    assert max(T for _, T, _, _ in CONFIGS) > 32


def test_a_drawn_x_varies_from_row_to_row():
    """Every cell is drawn on its own (no fill value): an x whose rows are alike would hide the bias, every
    query averaging the same values. Apart from a few simplest draws (all zeros), most rows of an x differ."""
    seen = []

    @settings(max_examples=30, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(PROBLEM.strategy())
    def collect(args):
        seen.append(args["x"])

    collect()
    varied = [x for x in seen if len(np.unique(x, axis=0)) >= max(2, x.shape[0] // 2)]
    assert len(varied) >= len(seen) - 4
