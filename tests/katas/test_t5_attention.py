"""t5_attention: the input menu avoids exact bucket boundaries, and the reference behaves as the statement says.

A bucket of the log-spaced part is floor(E + L * ln(d / E) / ln(max_distance / E)), with n buckets per side,
E = n // 2 and L = n - E (n = num_buckets // 2 bidirectional, num_buckets one-directional). Where the value
inside the floor is a whole number, correct float32 and float64 programs may floor to neighbouring buckets and
so read different biases from the table; the generated inputs must never meet such a size.
"""

import importlib.util
import math

import numpy as np
import pytest

from conftest import ROOT
from grader.problem import problems

PROBLEM = problems.load(ROOT, "t5_attention")


def _strategies():
    spec = importlib.util.spec_from_file_location("t5_attention_strategies", PROBLEM.folder / "strategies.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONFIGS = _strategies().CONFIGS  # (seed, T, D, num_heads, num_buckets, max_distance)


def sides(num_buckets):
    """Buckets per side in the bidirectional and in the one-directional scheme."""
    return {"bidirectional": num_buckets // 2, "one-directional": num_buckets}


def exact_boundaries(n, max_distance):
    """Sizes d with E < d < max_distance where the log-spaced bucket formula is a whole number, decided in
    integer arithmetic: E + L * ln(d / E) / ln(max_distance / E) = E + m exactly when
    (d / E) ** L == (max_distance / E) ** m, that is d**L * E**m == max_distance**m * E**L."""
    E = n // 2
    L = n - E
    return [(d, m) for d in range(E + 1, max_distance) for m in range(1, L)
            if d**L * E**m == max_distance**m * E**L]


def test_the_boundary_test_finds_the_t5_defaults():
    """With 32 buckets and max_distance 128, sizes 16, 32 and 64 of an encoder layer are whole numbers."""
    assert [d for d, _ in exact_boundaries(16, 128)] == [16, 32, 64]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"nb{c[4]}-md{c[5]}")
def test_no_drawn_configuration_meets_an_exact_bucket_boundary(config):
    _, _, _, _, num_buckets, max_distance = config
    for scheme, n in sides(num_buckets).items():
        assert max_distance > n // 2, f"{scheme}: max_distance must exceed the exact sizes"
        assert exact_boundaries(n, max_distance) == [], f"{scheme} scheme, {num_buckets} buckets"


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"nb{c[4]}-md{c[5]}")
def test_no_drawn_size_comes_near_a_bucket_boundary(config):
    """Far from whole numbers too, so that float32 and float64 rounding cannot move a bucket."""
    _, T, _, _, num_buckets, max_distance = config
    for n in sides(num_buckets).values():
        E, L = n // 2, n - n // 2
        for d in range(E + 1, min(T, max_distance)):
            value = L * math.log(d / E) / math.log(max_distance / E)
            assert abs(value - round(value)) > 1e-3, (num_buckets, max_distance, d)


def test_the_menu_varies_every_size():
    columns = {"seed": 0, "T": 1, "D": 2, "num_heads": 3, "num_buckets": 4, "max_distance": 5}
    for name, i in columns.items():
        assert len({c[i] for c in CONFIGS}) >= 2, f"{name} takes one value only"
    assert len({c[2] // c[3] for c in CONFIGS}) >= 2, "head_dim takes one value only"
    assert all(c[2] % c[3] == 0 for c in CONFIGS)
    assert any(c[1] >= 4 * c[5] for c in CONFIGS), "no T well beyond max_distance"


def test_the_fixed_examples_use_configurations_of_the_menu():
    for ex in PROBLEM.examples:
        a = ex.args
        config = (a["seed"], *a["x"].shape, a["num_heads"], a["num_buckets"], a["max_distance"])
        assert config in CONFIGS, ex.name
    assert {ex.args["causal"] for ex in PROBLEM.examples} == {False, True}


@pytest.fixture(scope="module")
def reference():
    spec = importlib.util.spec_from_file_location("t5_attention_reference", PROBLEM.reference)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def far_example(causal):
    (ex,) = [e for e in PROBLEM.examples if e.args["x"].shape[0] == 20 and e.args["causal"] == causal]
    return dict(ex.args)


def test_keys_beyond_max_distance_are_told_apart_only_by_content(reference):
    """Encoder layer, T = 20, max_distance = 5: for query 0 every key from 4 on is in the last bucket, so
    reversing the order of those rows of x leaves output row 0 as it was; row 1 (key 4 only 3 away) changes."""
    args = far_example(causal=False)
    out = np.asarray(reference.t5_attention(**args)).reshape(args["x"].shape)
    x = args["x"].copy()
    x[4:] = x[4:][::-1]
    moved = np.asarray(reference.t5_attention(**{**args, "x": x})).reshape(x.shape)
    np.testing.assert_allclose(moved[0], out[0], rtol=1e-5, atol=1e-6)
    assert np.abs(moved[1] - out[1]).max() > 1e-3


def test_a_causal_layer_ignores_later_positions_and_far_distances(reference):
    """Decoder layer: row 19 sees keys 0 .. 14 in bucket 7 (size 5 and more), so reversing them keeps it;
    changing the last row of x changes only the last row of the output."""
    args = far_example(causal=True)
    out = np.asarray(reference.t5_attention(**args)).reshape(args["x"].shape)
    x = args["x"].copy()
    x[:15] = x[:15][::-1]
    moved = np.asarray(reference.t5_attention(**{**args, "x": x})).reshape(x.shape)
    np.testing.assert_allclose(moved[19], out[19], rtol=1e-5, atol=1e-6)
    x = args["x"].copy()
    x[-1] = -x[-1]
    changed = np.asarray(reference.t5_attention(**{**args, "x": x})).reshape(x.shape)
    np.testing.assert_array_equal(changed[:-1], out[:-1])
    assert np.abs(changed[-1] - out[-1]).max() > 1e-3


def test_the_bias_table_is_the_one_nn_embed_would_hold(reference):
    """The statement says the tree and its values are those of nn.Embed(N, H) named relative_attention_bias."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    class WithEmbed(nn.Module):
        @nn.compact
        def __call__(self, x):
            dense = [nn.Dense(6, use_bias=False, name=name) for name in ("q", "k", "v", "o")]
            table = nn.Embed(8, 3, name="relative_attention_bias")
            return sum(d(x) for d in dense) + table(jnp.zeros((), jnp.int32)).sum()

    x = jnp.zeros((2, 6), jnp.float32)
    ours = reference.T5Attention(6, 3, 8, 5, False).init(jax.random.PRNGKey(1), x)
    theirs = WithEmbed().init(jax.random.PRNGKey(1), x)
    assert jax.tree_util.tree_structure(ours) == jax.tree_util.tree_structure(theirs)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.grading
def test_a_hard_coded_head_size_fails_on_the_shapes_the_learner_passed(grade_json, tmp_path):
    """The entry builds the parameters on the input's own shapes: an error in the learner's forward names
    the length they passed, not a placeholder's."""
    wrong = tmp_path / "t5_attention.py"
    wrong.write_text((ROOT / "solutions/t5_attention/t5_attention.py").read_text()
                     .replace("t.reshape(T, self.num_heads, self.d_model // self.num_heads)",
                              "t.reshape(T, self.num_heads, 5)"))  # a hard-coded head size
    assert "reshape(T, self.num_heads, 5)" in wrong.read_text()
    code, report = grade_json("t5_attention", "--file", wrong)
    assert code == 1 and report["status"] == "error"
    T, D = report["counterexample"]["inputs"]["x"]["shape"]
    said = report["message"] + (report["counterexample"]["error"]["traceback"] or "")
    assert f"({T}, {D})" in said, said
