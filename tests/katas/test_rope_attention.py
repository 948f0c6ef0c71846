"""rope_attention: the reference is the paper's layer, the conversion between Meta's and Hugging Face's layouts
is an identity of the layer, the known mistakes are what their messages say, and the generated inputs are what
the statement promises.

Everything runs in this process and starts nothing (`grade check rope_attention`, run by
tests/instructor/test_check.py, grades the variants and the alternatives through the grader). The paper's
layer is written here in float64 NumPy on the reference's parameters, with RoFormer's rotation matrix: the
block-diagonal R_p of 2 x 2 rotations by p theta_i on the pairs (2i, 2i + 1), conjugated by the permutation
that takes the half-split layout's pairs (i, i + d/2) there. The reference runs under jax.jit with seed and
num_heads static and the base traced, as a grading worker runs it.
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
from peers import even_first, rotation
from grader.problem import problems

SLUG = "rope_attention"
PROBLEM = problems.load(ROOT, SLUG)
REFERENCE = problems.load_module(PROBLEM.reference, "rope_attention_reference_under_test")
STRATEGIES = problems.load_module(PROBLEM.folder / "strategies.py", "rope_attention_strategies_under_test")
CONFIGS = STRATEGIES.CONFIGS  # (seed, T, D, num_heads)
BASES = STRATEGIES.BASES
RTOL, ATOL = 1e-4, 1e-5  # problem.toml's tolerance
# A float32 layer against the float64 one, as a fraction of the tolerance: up to 0.12 on the menu and off it,
# with x up to 4 and positions below 40 (a few cells where the output nearly cancels, so that atol is all the
# tolerance there); the known mistakes, where they show, land over a thousand times the tolerance away.
FLOAT32 = 0.2
GOLDEN = json.loads((PROBLEM.solution_folder / "golden.json").read_text())


# -- the paper's rotation, in float64 --------------------------------------------------------------------------

def rotate64(t, base, *, interleaved=False, sign=1.0, positions=None):
    """(T, H, d) float64: every row t turned by R_(positions[t]) (0 .. T-1 by default), pairs of the layout."""
    T, _, d = t.shape
    P = np.eye(d) if interleaved else np.eye(d)[even_first(d)]  # half-split feature j is the paper's even_first(d)[j]
    positions = np.arange(T) if positions is None else positions
    return np.stack([t[i] @ (P @ rotation(p, d, base, sign) @ P.T).T for i, p in enumerate(positions)])


@functools.cache
def kernels(seed, D, H):
    """The reference's four (D, D) kernels for ``seed``, in float64."""
    variables = REFERENCE.RopeAttention(D, H, 10000.0).init(jax.random.PRNGKey(seed), np.zeros((2, D), np.float32))
    return {name: np.asarray(variables["params"][name]["kernel"], np.float64) for name in "qkvo"}


def layer64(seed, x, H, base, *, p=None, rotate=("q", "k"), interleaved=False, sign=1.0, positions=None,
            before_split=False, used_base=None, scale=True, mask=True, softmax_axis=-1, merge="transpose"):
    """(T, D) float64: the paper's layer on the reference's kernels (or ``p``), or one of the changes the known
    mistakes make to it."""
    x = np.asarray(x, np.float64)
    T, D = x.shape
    hd = D // H
    p = kernels(seed, D, H) if p is None else p
    b = base if used_base is None else used_base

    def projected(name):
        t = x @ p[name]
        if name not in rotate:
            return t.reshape(T, H, hd)
        if before_split:
            return rotate64(t[:, None, :], b, interleaved=interleaved, sign=sign, positions=positions).reshape(T, H, hd)
        return rotate64(t.reshape(T, H, hd), b, interleaved=interleaved, sign=sign, positions=positions)

    q, k, v = (projected(n) for n in "qkv")
    s = np.einsum("ihd,jhd->hij", q, k) / (math.sqrt(hd) if scale else 1.0)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    s = np.where(j <= i, s, -np.inf) if mask else s
    w = np.exp(s - s.max(axis=softmax_axis, keepdims=True))
    w /= w.sum(axis=softmax_axis, keepdims=True)
    out = w @ v.transpose(1, 0, 2)  # (H, T, hd)
    merged = out.transpose(1, 0, 2).reshape(T, D) if merge == "transpose" else out.reshape(T, D)
    return merged @ p["o"]


@functools.cache
def jitted(path):
    module = problems.load_module(path, f"rope_attention_{path.parent.name}_{path.stem}")
    return jax.jit(module.rope_attention, static_argnums=(0, 2))


def run(path, seed, x, H, base):
    """(T, D) numpy: the module at ``path`` on those arguments, jitted as in grading."""
    out = np.asarray(jitted(path)(seed, np.asarray(x, np.float32), H, base))
    assert out.dtype == np.float32 and out.shape == (x.size,)
    return out.reshape(x.shape)


def reference(seed, x, H, base):
    return run(PROBLEM.reference, seed, x, H, base)


def fraction_of_tolerance(actual, expected):
    return float(np.max(np.abs(actual - expected) / (ATOL + RTOL * np.abs(expected))))


def random_x(T, D, seed=0, scale=1.0):
    return (scale * np.random.default_rng(seed).uniform(-1, 1, (T, D))).astype(np.float32)


EXAMPLES = {ex.name: ex for ex in PROBLEM.examples}
ex_ids = [ex.name.split(":")[-1].strip()[:40] for ex in PROBLEM.examples]


# -- the helpers against the paper's rotation --------------------------------------------------------------------

@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("shape, offset, base", [((3, 1, 4), 0, 100.0), ((5, 3, 8), 7, 17.5), ((4, 2, 6), 64, 500000.0),
                                                 ((2, 2, 2), 1, 10.0)], ids=str)
def test_apply_rope_is_the_paper_s_rotation(interleaved, shape, offset, base):
    """Both layouts (the layer uses half-split; the helper is the kata rope's, both included), any offset."""
    x = random_x(shape[0], shape[1] * shape[2], seed=3).reshape(shape)
    got = np.asarray(REFERENCE.apply_rope(x, offset, base, interleaved))
    want = rotate64(x.astype(np.float64), base, interleaved=interleaved, positions=offset + np.arange(shape[0]))
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)


def test_the_small_helpers_are_the_paper_s():
    np.testing.assert_allclose(REFERENCE.inverse_frequencies(6, 17.5), 17.5 ** (-np.arange(0, 6, 2) / 6), rtol=1e-6)
    np.testing.assert_allclose(REFERENCE.angles(3, 5, 4, 100.0), np.arange(5, 8)[:, None] * [1.0, 0.1], rtol=1e-6)
    np.testing.assert_array_equal(REFERENCE.rotate_half(np.arange(1.0, 7.0, dtype=np.float32)), [-4, -5, -6, 1, 2, 3])


def test_the_stub_asks_for_the_kata_rope_s_helpers_and_the_steps():
    """The learner carries rope's code over: the same helper names and signatures (and docstrings) as its stub,
    each a part, beside apply_rope and the layer's four steps. rope's rotate_pairs is not asked for: the layer
    never rotates interleaved, so the part could never be checked here."""
    import ast

    assert PROBLEM.helpers() == ["inverse_frequencies", "angles", "rotate_half", "apply_rope"]
    assert PROBLEM.methods() == [f"RopeAttention.{m}" for m in ("split_heads", "merge_heads", "scores", "weights")]
    rope_stub = ROOT / "problems" / "rope" / "rope.py"
    if not rope_stub.is_file():
        pytest.skip("the kata rope is not in this checkout")

    def functions(path):
        tree = ast.parse(path.read_text())
        return {node.name: (ast.unparse(node.args), ast.get_docstring(node)) for node in tree.body
                if isinstance(node, ast.FunctionDef)}

    theirs, ours = functions(rope_stub), functions(PROBLEM.stub)
    for name in ("inverse_frequencies", "angles", "rotate_half"):
        assert ours[name] == theirs[name], name
    assert ours["apply_rope"][0] == theirs["rope"][0].removeprefix("seed, ")


def test_apply_rope_takes_a_traced_base():
    x = random_x(4, 8, seed=1).reshape(4, 2, 4)
    traced = jax.jit(REFERENCE.apply_rope, static_argnums=(1, 3))(x, 0, 17.5, False)
    np.testing.assert_allclose(traced, REFERENCE.apply_rope(x, 0, 17.5, False), rtol=0, atol=1e-6)


# -- the reference against the paper's layer --------------------------------------------------------------------

@pytest.mark.parametrize("example", PROBLEM.examples, ids=ex_ids)
def test_the_fixed_examples_are_the_paper_s_layer(example):
    a = example.args
    exact = layer64(a["seed"], a["x"], a["num_heads"], a["base"])
    if example.expected is not None:
        # six decimals (5e-7), read back as float32 (up to 6e-8 more)
        np.testing.assert_allclose(np.asarray(example.expected, np.float64), exact, rtol=0, atol=5.6e-7)
    assert fraction_of_tolerance(reference(a["seed"], a["x"], a["num_heads"], a["base"]), exact) < FLOAT32


@settings(max_examples=8, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from([(1, 1), (7, 2), (3, 5), (40, 3), (16, 6), (2, 1)]), st.sampled_from([2, 4, 6, 10]),
       st.sampled_from([2.5, 100.0, 1e6]), st.sampled_from([0.3, 1.0, 4.0]), st.integers(0, 3))
def test_the_reference_is_the_paper_s_layer_off_the_menu(length_heads, head_dim, base, scale, seed):
    """Sizes, bases and scales the strategy never draws (T up to 40, 1 to 6 heads, head_dim 2 to 10, base 2.5
    and 1e6, x up to 4)."""
    T, H = length_heads
    x = random_x(T, H * head_dim, seed, scale)
    assert fraction_of_tolerance(reference(seed, x, H, base), layer64(seed, x, H, base)) < FLOAT32


def test_the_kernels_are_t5_attention_s_for_the_same_seed_and_width():
    """The statement: the four kernels of seed 0 are the ones t5_attention's worked example uses."""
    t5 = problems.load_module(problems.load(ROOT, "t5_attention").reference, "rope_attention_t5_kernels")
    x = np.zeros((2, 4), np.float32)
    theirs = t5.T5Attention(4, 2, 8, 6, True).init(jax.random.PRNGKey(0), x)["params"]
    for name in "qkvo":
        np.testing.assert_array_equal(kernels(0, 4, 1)[name], np.asarray(theirs[name]["kernel"], np.float64))


# -- the statement's figures ---------------------------------------------------------------------------------------

def worked_x():
    return EXAMPLES[PROBLEM.examples[0].name].args["x"].astype(np.float64)


def test_the_worked_example_s_rotation_scores_and_weights():
    p = kernels(0, 4, 1)
    x = worked_x()
    q, k = (x @ p["q"]).reshape(4, 1, 4), (x @ p["k"]).reshape(4, 1, 4)
    qr, kr = rotate64(q, 100.0), rotate64(k, 100.0)
    np.testing.assert_allclose(q[1, 0], [-0.1838, 0.1249, 0.0198, -1.2505], atol=5e-5)
    np.testing.assert_allclose(qr[1, 0], [-0.1160, 0.2491, -0.1439, -1.2317], atol=5e-5)
    np.testing.assert_array_equal(qr[0], q[0])  # position 0 is the identity

    def softmax(s):
        w = np.exp(s - s.max())
        return w / w.sum()

    rotated, plain = kr[:, 0] @ qr[3, 0] / 2, k[:, 0] @ q[3, 0] / 2
    np.testing.assert_allclose(rotated, [0.0789, 0.1855, -0.1282, -0.1824], atol=5e-5)
    np.testing.assert_allclose(softmax(rotated), [0.2706, 0.3010, 0.2200, 0.2084], atol=5e-5)
    np.testing.assert_allclose(plain, [0.3368, -0.3517, 0.0748, -0.1824], atol=5e-5)
    np.testing.assert_allclose(softmax(plain), [0.3488, 0.1752, 0.2684, 0.2075], atol=5e-5)
    assert abs(rotated[3] - plain[3]) < 1e-12  # the diagonal: R_0 = I


def test_the_worked_example_s_other_rows():
    x = worked_x()
    np.testing.assert_allclose(layer64(0, x, 1, 100.0, rotate=())[3], [0.138407, 0.025830, -0.334634, -0.185986],
                               atol=5e-7)
    np.testing.assert_allclose(layer64(0, x, 1, 100.0, interleaved=True)[3],
                               [0.099563, -0.017347, -0.250909, -0.106593], atol=5e-7)
    np.testing.assert_allclose(layer64(0, x, 1, 10000.0, rotate=("q", "k", "v"))[3],
                               [0.018001, 0.243014, -0.233644, -0.369322], atol=5e-7)
    rows0 = [reference(0, x, H, base)[0] for H, base in ((1, 100.0), (1, 10000.0), (2, 100.0))]
    np.testing.assert_allclose(rows0[1:], [rows0[0]] * 2, rtol=0, atol=1e-6)  # query 0 sees itself only


@pytest.mark.parametrize("base", [100.0, 10000.0, 17.5, 2.0])
def test_with_one_pair_per_head_the_base_and_the_layout_cannot_matter(base):
    x = worked_x()
    np.testing.assert_allclose(reference(0, x, 2, base), reference(0, x, 2, 100.0), rtol=0, atol=1e-6)
    np.testing.assert_allclose(layer64(0, x, 2, base, interleaved=True), layer64(0, x, 2, 100.0), rtol=1e-12, atol=1e-12)


# -- what the layer sees: differences of positions ---------------------------------------------------------------

@pytest.mark.parametrize("shift", [1, 5, 40])
def test_positions_shifted_together_give_the_same_layer(shift):
    x = random_x(9, 16, 2, 3.0)
    np.testing.assert_allclose(layer64(3, x, 4, 17.5, positions=shift + np.arange(9)), layer64(3, x, 4, 17.5),
                               rtol=1e-10, atol=1e-12)


def test_positions_counted_from_the_end_are_the_negative_angle():
    x = random_x(9, 16, 2, 3.0)
    np.testing.assert_allclose(layer64(3, x, 4, 17.5, positions=np.arange(9)[::-1]),
                               layer64(3, x, 4, 17.5, sign=-1.0), rtol=1e-10, atol=1e-12)


# -- Meta's layout and Hugging Face's: the conversion identity -----------------------------------------------------

def hf_permute(w, n_heads, dim1, dim2):
    """convert_llama_weights_to_hf.py's permute, on a torch-style (out, in) weight: each head's output rows
    viewed as (pairs, 2), the two axes swapped."""
    return w.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(0, 2, 1, 3).reshape(dim1, dim2)


def meta_kernels(seed, D, H):
    """Kernels in Meta's layout whose Hugging Face conversion is the reference's: q and k with every head's
    columns put back in Meta's order, v and o as they are."""
    hd = D // H
    to_meta = np.argsort(np.concatenate([h * hd + even_first(hd) for h in range(H)]))
    p = dict(kernels(seed, D, H))
    p["q"], p["k"] = p["q"][:, to_meta], p["k"][:, to_meta]
    return p


@pytest.mark.parametrize("config", [(0, 4, 4, 1), (1, 20, 24, 3), (1, 33, 16, 2), (2, 12, 12, 2)], ids=str)
def test_interleaved_rope_on_meta_s_kernels_is_half_split_rope_on_the_converted_ones(config):
    seed, T, D, H = config
    x = random_x(T, D, seed, 3.0)
    meta = meta_kernels(seed, D, H)
    for name in "qk":  # Hugging Face's permute of Meta's (out, in) weight gives the reference's kernel back
        np.testing.assert_array_equal(hf_permute(meta[name].T, H, D, D).T, kernels(seed, D, H)[name])
    np.testing.assert_allclose(layer64(seed, x, H, 17.5, p=meta, interleaved=True), layer64(seed, x, H, 17.5),
                               rtol=1e-10, atol=1e-12)


def test_the_identity_needs_the_permutation_and_leaves_v_and_o_alone():
    """Without the permutation the interleaved layout is another layer (the known mistake interleaved_layout);
    permuting v or o as well breaks the identity."""
    seed, T, D, H = 1, 20, 24, 3
    x = random_x(T, D, seed, 3.0)
    right = layer64(seed, x, H, 17.5)
    assert fraction_of_tolerance(layer64(seed, x, H, 17.5, interleaved=True), right) > 1000
    for name in "vo":
        p = meta_kernels(seed, D, H)
        hd = D // H
        p[name] = p[name][:, np.argsort(np.concatenate([h * hd + even_first(hd) for h in range(H)]))]
        assert fraction_of_tolerance(layer64(seed, x, H, 17.5, p=p, interleaved=True), right) > 1000, name


def test_the_statement_s_orders():
    assert even_first(4).tolist() == [0, 2, 1, 3] and even_first(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]


@pytest.mark.parametrize("name", ["hf_llama_port", "meta_interleaved", "complex_rotation"])
def test_the_ports_are_the_paper_s_layer(name):
    """Hugging Face's LlamaAttention (rotate_half, cat(freqs, freqs)), Meta's interleaved complex rotation on
    kernels put back in Meta's order, and the complex form, on sizes and bases off the menu too."""
    path = PROBLEM.variants("alternatives")[name]
    for seed, T, D, H, base in [(1, 33, 16, 2, 10.0), (1, 20, 24, 3, 500000.0), (0, 40, 12, 2, 17.5)]:
        x = random_x(T, D, seed, 3.0)
        assert fraction_of_tolerance(run(path, seed, x, H, base), layer64(seed, x, H, base)) < FLOAT32, (name, T, H)


# -- the known mistakes are what their messages say --------------------------------------------------------------

MISTAKES = {  # the change each known mistake makes to the paper's layer
    "v_rotated": dict(rotate=("q", "k", "v")),
    "only_q_rotated": dict(rotate=("q",)),
    "interleaved_layout": dict(interleaved=True),
    "rope_before_head_split": dict(before_split=True),
    "negative_angle": dict(sign=-1.0),
    "base_ignored": dict(used_base=10000.0),
    "no_scaling": dict(scale=False),
    "no_causal_mask": dict(mask=False),
    "softmax_over_queries": dict(softmax_axis=-2),
    "heads_merged_without_transpose": dict(merge="reshape"),
}


def hidden_by(H, hd, base):
    """The known mistakes that a configuration cannot show: one head hides everything between heads, one pair
    per head hides the layout and the base, base 10000 hides base_ignored."""
    hidden = set()
    if H == 1:
        hidden |= {"rope_before_head_split", "heads_merged_without_transpose"}
    if hd == 2:
        hidden |= {"interleaved_layout", "base_ignored"}
    if base == 10000.0:
        hidden.add("base_ignored")
    return hidden


def test_every_known_mistake_is_described_here():
    assert sorted(MISTAKES) == sorted(PROBLEM.variants("pitfalls"))


@pytest.mark.parametrize("entry", GOLDEN, ids=ex_ids)
def test_each_known_mistake_s_stored_output_is_the_change_its_message_names(entry):
    """golden.json keeps every variant's output on the fixed examples; each is the paper's layer with that one
    change, and differs from the reference's unless the example's sizes hide it."""
    example = next(ex for ex in PROBLEM.examples if ex.name == entry["name"])
    seed, x, H, base = (example.args[k] for k in ("seed", "x", "num_heads", "base"))
    hidden = hidden_by(H, x.shape[1] // H, base)
    right = np.asarray(entry["output"]).reshape(x.shape)
    assert sorted(entry["pitfalls"]) == sorted(MISTAKES)
    for name, stored in entry["pitfalls"].items():
        out = np.asarray(stored["output"]).reshape(x.shape)
        # float32 rounding only: within half the tolerance (no_scaling's sharper softmax, x up to 3: 0.25)
        assert fraction_of_tolerance(out, layer64(seed, x, H, base, **MISTAKES[name])) < 0.5, name
        assert np.allclose(out, right, rtol=RTOL, atol=ATOL) == (name in hidden), name


def test_every_listed_mistake_shows_in_the_fixed_examples():
    """So that each is named on a fixed example, where it fails first, with the others to tell it apart."""
    shown = set()
    for ex in PROBLEM.examples:
        a = ex.args
        shown |= set(MISTAKES) - hidden_by(a["num_heads"], a["x"].shape[1] // a["num_heads"], a["base"])
    assert shown == set(MISTAKES)


@pytest.mark.parametrize("config", CONFIGS, ids=str)
@pytest.mark.parametrize("base", [17.5, 10000.0])
def test_every_configuration_shows_the_mistakes_it_should(config, base):
    """On the menu, in float64: each known mistake is far outside the tolerance wherever the sizes let it show,
    so no wrong program of the list passes."""
    seed, T, D, H = config
    x = random_x(T, D, seed, 1.0)
    right = layer64(seed, x, H, base)
    hidden = hidden_by(H, D // H, base)
    for name, change in MISTAKES.items():
        assert (fraction_of_tolerance(layer64(seed, x, H, base, **change), right) > 100) == (name not in hidden), name


def test_a_base_rounded_to_an_int_shows():
    """The fractional base: int(17.5) = 17 is off by tens of times the tolerance or more wherever a head has
    two pairs or more and T is past the worked example's 4."""
    for seed, T, D, H in CONFIGS:
        if D // H > 2 and T > 4:
            x = random_x(T, D, seed, 1.0)
            assert fraction_of_tolerance(layer64(seed, x, H, 17.5, used_base=17.0), layer64(seed, x, H, 17.5)) > 20


# -- the property ---------------------------------------------------------------------------------------------------

def test_the_property_holds_on_the_reference_and_says_where_a_nan_row_comes_from():
    (finite,) = PROBLEM.properties().PROPERTIES
    for seed, T, D, H in CONFIGS:
        args = {"seed": seed, "x": random_x(T, D, seed, 3.0), "num_heads": H, "base": 17.5}
        assert finite(args, reference(seed, args["x"], H, 17.5)) is None
    x = worked_x().astype(np.float32)
    out = reference(0, x, 1, 100.0).copy()
    out[0] = np.nan  # query 0 with its one key hidden too
    said = finite({"seed": 0, "x": x, "num_heads": 1, "base": 100.0}, out)
    assert said.startswith("row i=0 holds nan") and "j >= i instead of j > i" in said


# -- the generated inputs ------------------------------------------------------------------------------------------

@settings(max_examples=100, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_stay_in_the_stated_domain(args):
    x = args["x"]
    assert (args["seed"], *x.shape, args["num_heads"]) in CONFIGS
    assert args["base"] in BASES
    assert x.dtype == np.float32 and np.abs(x).max() <= 3.0


def test_the_menu_makes_every_size_and_every_mistake_matter():
    fixed = {(ex.args["seed"], *ex.args["x"].shape, ex.args["num_heads"]) for ex in PROBLEM.examples}
    assert fixed == set(CONFIGS[:3])
    assert all(D % H == 0 and (D // H) % 2 == 0 for _, _, D, H in CONFIGS)
    head_dims = {D // H for _, _, D, H in CONFIGS}
    assert 2 in head_dims and len(head_dims - {2}) >= 3, "one pair per head hides the layout and the base"
    assert any((D // H) % 4 == 2 and D // H > 2 for _, _, D, H in CONFIGS), "an odd number of pairs"
    assert any(H > 1 and D // H > 2 for _, _, D, H in CONFIGS), "several heads of several pairs each"
    assert {1, 2, 3, 4} <= {H for *_, H in CONFIGS}
    for i, name in enumerate(("seed", "T", "D", "num_heads")):
        assert len({c[i] for c in CONFIGS}) >= 3, f"{name} takes too few values"
    assert 32 <= max(T for _, T, _, _ in CONFIGS) < 128, "far positions, below where float32 angles drift"
    assert 10000.0 in BASES and any(b != int(b) for b in BASES) and len(BASES) >= 4


def test_a_drawn_x_varies_from_row_to_row():
    """Every cell is drawn on its own (no fill value): an x whose rows are alike would hide every position
    mistake, every query averaging the same values. Apart from a few simplest draws (all zeros), most rows of
    an x differ."""
    seen = []

    @settings(max_examples=30, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(PROBLEM.strategy())
    def collect(args):
        seen.append(args)

    collect()
    varied = [a["x"] for a in seen if len(np.unique(a["x"], axis=0)) >= max(2, a["x"].shape[0] // 2)]
    assert len(varied) >= len(seen) - 4
    assert len({a["base"] for a in seen}) >= 3
