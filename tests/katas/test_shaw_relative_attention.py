"""shaw_relative_attention: the reference follows the statement's conventions (clipped offsets j - i
shifted by k, tables shared by the heads, a causal flag that masks only when asked), its parameter tree is
the statement's, and the generated inputs are what the statement promises.

In-process and quick: nothing here starts a worker (`grade check shaw_relative_attention`, run by
tests/instructor/test_check.py, covers the variants and alternatives through the grader).
"""

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conftest import ROOT
from grader.problem import problems

SLUG = "shaw_relative_attention"
PROBLEM = problems.load(ROOT, SLUG)
REF = problems.load_module(PROBLEM.reference, f"{SLUG}_reference_under_test")
STRATEGIES = problems.load_module(PROBLEM.folder / "strategies.py", f"{SLUG}_strategies_under_test")
PROPERTIES = PROBLEM.properties().PROPERTIES
SHAPES = STRATEGIES.SHAPES  # (seed, T, D, num_heads, k, causal)
ENTRY = jax.jit(REF.shaw_relative_attention, static_argnums=(0, 2, 3, 4))


def random_x(T, D, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, (T, D)).astype(np.float32)


def params(D, H, k, seed=0):
    model = REF.ShawAttention(D, H, k)
    return model.init(jax.random.PRNGKey(seed), np.zeros((2, D), np.float32), False)["params"]


def definition(seed, x, H, k, causal):
    """(T, D) in float64, by loops over heads, queries and keys, on the reference's parameters."""
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), params(x.shape[1], H, k, seed))
    T, D = x.shape
    hd = D // H
    x = x.astype(np.float64)
    q, kk, v = (x @ p[n]["kernel"] + p[n]["bias"] for n in ("query", "key", "value"))
    a_k, a_v = p["relative_key"]["table"], p["relative_value"]["table"]
    z = np.zeros((T, D))
    for h in range(H):
        c = slice(h * hd, (h + 1) * hd)
        for i in range(T):
            keys = [j for j in range(T) if j <= i or not causal]
            rows = [min(max(j - i, -k), k) + k for j in keys]
            e = np.array([q[i, c] @ (kk[j, c] + a_k[r]) for j, r in zip(keys, rows)]) / np.sqrt(hd)
            w = np.exp(e - e.max())
            w /= w.sum()
            z[i, c] = sum(wj * (v[j, c] + a_v[r]) for wj, j, r in zip(w, keys, rows))
    return z @ p["out"]["kernel"] + p["out"]["bias"]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "seed{}_T{}_D{}_H{}_k{}_causal{}".format(*s))
def test_the_reference_is_the_definition(shape):
    seed, T, D, H, k, causal = shape
    x = random_x(T, D, seed)
    out = np.asarray(ENTRY(seed, x, H, k, causal))
    assert out.dtype == np.float32 and out.shape == (T * D,)
    np.testing.assert_allclose(out.reshape(T, D), definition(seed, x, H, k, causal), rtol=1e-5, atol=1e-5)


def test_the_lookup_is_the_clipped_offset_shifted_by_k():
    k, T = 2, 6
    module = REF.RelativePosition(k, 1)
    table = np.arange(2 * k + 1, dtype=np.float32)[:, None]  # row r holds r
    rows = np.asarray(module.apply({"params": {"table": table}}, T))[..., 0]  # (T, T)
    offset = np.arange(T)[None, :] - np.arange(T)[:, None]
    assert np.array_equal(rows, np.clip(offset, -k, k) + k)


def test_the_parameter_tree_is_the_statements():
    D, H, k = 8, 2, 3
    p = params(D, H, k)
    shapes = {path: leaf.shape for path, leaf in jax.tree_util.tree_leaves_with_path(p)}
    names = {"/".join(key.key for key in path): shape for path, shape in shapes.items()}
    expected = {f"{m}/{n}": s for m in ("query", "key", "value", "out")
                for n, s in (("kernel", (D, D)), ("bias", (D,)))}
    expected |= {"relative_key/table": (2 * k + 1, D // H), "relative_value/table": (2 * k + 1, D // H)}
    assert names == expected
    for m in ("query", "key", "value", "out"):
        assert not np.asarray(p[m]["bias"]).any()  # nn.Dense's default: biases start at zero
    bound = np.sqrt(6 / (2 * k + 1 + D // H))  # xavier uniform
    for m in ("relative_key", "relative_value"):
        table = np.asarray(p[m]["table"])
        assert np.abs(table).max() <= bound and np.abs(table).max() > bound / 2


def test_causal_rows_depend_only_on_earlier_positions():
    seed, T, D, H, k, causal = SHAPES[1]
    assert causal
    x = random_x(T, D, seed)
    changed = x.copy()
    changed[-1] += 1.0
    before = np.asarray(ENTRY(seed, x, H, k, True)).reshape(T, D)
    after = np.asarray(ENTRY(seed, changed, H, k, True)).reshape(T, D)
    np.testing.assert_array_equal(before[:-1], after[:-1])
    assert not np.allclose(before[-1], after[-1])


def test_the_fixed_examples_are_the_first_shapes_of_the_menu():
    for example, shape in zip(PROBLEM.examples, SHAPES):
        args = example.args
        x = np.asarray(args["x"])
        assert (args["seed"], *x.shape, args["num_heads"], args["max_relative_position"], args["causal"]) == (
            shape[0], shape[1], shape[2], shape[3], shape[4], shape[5])


def test_the_menu_varies_every_size_and_covers_clipping_and_both_flags():
    seeds, Ts, Ds, Hs, ks, flags = (set(column) for column in zip(*SHAPES))
    assert len(Ts) > 1 and len(Ds) > 1 and len(Hs) > 1 and len(ks) > 1 and flags == {True, False}
    assert any(T > k + 1 for _, T, _, _, k, _ in SHAPES)  # some pairs are clipped
    assert any(T <= k for _, T, _, _, k, _ in SHAPES)  # and in one row none is
    assert all(D % H == 0 and D // H >= 2 and T >= 3 for _, T, D, H, _, _ in SHAPES)


@settings(max_examples=30, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_are_as_the_statement_says(args):
    x = args["x"]
    assert x.dtype == np.float32 and x.ndim == 2
    assert (args["seed"], *x.shape, args["num_heads"], args["max_relative_position"], args["causal"]) in SHAPES
    assert isinstance(args["causal"], bool)
    assert np.isfinite(x).all() and np.abs(x).max() <= 2.0


def test_the_properties_hold_on_the_reference():
    seed, T, D, H, k, causal = SHAPES[0]
    x = random_x(T, D)
    out = np.asarray(ENTRY(seed, x, H, k, causal)).reshape(T, D)
    args = {"seed": seed, "x": x, "num_heads": H, "max_relative_position": k, "causal": causal}
    assert [check(args, out) for check in PROPERTIES] == [None] * len(PROPERTIES)
