"""transformer_xl_attention: the reference agrees with the four-term formula computed pair by pair,
and the generated inputs are what the statement promises.

In-process and quick: nothing here starts a worker (`grade check transformer_xl_attention`, run by
tests/instructor/test_check.py, covers the variants and alternatives through the grader).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conftest import ROOT
from grader.problem import problems

PROBLEM = problems.load(ROOT, "transformer_xl_attention")
REFERENCE = problems.load_module(PROBLEM.reference, "transformer_xl_attention_reference_under_test")
STRATEGIES = problems.load_module(PROBLEM.folder / "strategies.py", "txl_strategies_under_test")


def reference_params(seed, D, H):
    """The reference's parameters for (seed, D, H), as float64 numpy arrays."""
    model = REFERENCE.RelativeAttention(d_model=D, num_heads=H)
    placeholder = jax.ShapeDtypeStruct((1, D), jnp.float32)  # lazy_init: initialisers only
    variables = model.lazy_init(jax.random.PRNGKey(seed), placeholder, placeholder)
    return jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), variables["params"])


def direct(seed, x, memory, H):
    """(T, D) float64: every (head, query, key) score from the four-term formula, no shift trick."""
    T, D = x.shape
    M = memory.shape[0]
    dh = D // H
    p = reference_params(seed, D, H)
    context = np.concatenate([memory, x]).astype(np.float64)  # (M + T, D)
    q = x.astype(np.float64) @ p["query"]["kernel"]
    k = context @ p["key"]["kernel"]
    v = context @ p["value"]["kernel"]

    def r(distance):  # (D,): the projected interleaved sinusoid
        s = np.zeros(D)
        for pair in range(D // 2):
            angle = distance * 10000.0 ** (-2.0 * pair / D)
            s[2 * pair], s[2 * pair + 1] = math.sin(angle), math.cos(angle)
        return s @ p["pos_proj"]["kernel"]

    merged = np.zeros((T, D))
    for h in range(H):
        c = slice(h * dh, (h + 1) * dh)
        for i in range(T):
            scores = np.full(M + T, -np.inf)
            for j in range(M + T):
                if j <= M + i:  # key j at or before query i's absolute position M + i
                    rij = r(M + i - j)[c]
                    a, b = q[i, c] @ k[j, c], q[i, c] @ rij
                    cc, d = p["u"][h] @ k[j, c], p["v"][h] @ rij
                    scores[j] = (a + b + cc + d) / math.sqrt(dh)
            w = np.exp(scores - scores.max())
            merged[i, c] = (w / w.sum()) @ v[:, c]
    return merged @ p["out"]["kernel"]


@pytest.mark.parametrize(
    "seed, T, M, D, H",
    [
        (0, 3, 2, 8, 2),  # M < T
        (1, 4, 0, 8, 4),  # no memory
        (2, 2, 5, 12, 3),  # M > T
        (5, 1, 0, 4, 2),  # a single query, nothing before it
        (6, 3, 7, 10, 5),  # M much larger than T, odd head count
    ],
)
def test_the_reference_is_the_pairwise_formula(seed, T, M, D, H):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (T, D)).astype(np.float32)
    memory = rng.uniform(-2, 2, (M, D)).astype(np.float32)
    entry = jax.jit(REFERENCE.transformer_xl_attention, static_argnums=(0, 3))
    out = np.asarray(entry(seed, x, memory, H))
    assert out.dtype == np.float32 and out.shape == (T * D,)
    np.testing.assert_allclose(out.reshape(T, D), direct(seed, x, memory, H), rtol=1e-5, atol=1e-6)


def test_the_sinusoid_interleaves_sines_and_cosines():
    emb = np.asarray(REFERENCE.RelativeSinusoid(8).apply({}, jnp.array([0.0, 1.0, -2.0])))
    assert np.allclose(emb[0], [0, 1] * 4)
    assert np.allclose(emb[1, 0::2], np.sin([1, 0.1, 0.01, 0.001]), atol=1e-6)
    assert np.allclose(emb[1, 1::2], np.cos([1, 0.1, 0.01, 0.001]), atol=1e-6)
    assert np.allclose(emb[2, 0::2], -np.sin([2, 0.2, 0.02, 0.002]), atol=1e-6)  # sine is odd


def test_the_menu_varies_every_size_and_covers_the_memory_cases():
    shapes = STRATEGIES.SHAPES  # (seed, T, M, D, H)
    assert 3 <= len(shapes) <= 4  # every shape compiles once per run
    for column in range(1, 5):  # T, M, D, H: none the same on every row
        assert len({row[column] for row in shapes}) > 1
    Ms = [(M, T) for _, T, M, _, _ in shapes]
    assert any(M == 0 for M, _ in Ms)
    assert any(0 < M < T for M, T in Ms)
    assert any(M > T for M, T in Ms)
    for _, T, _, D, H in shapes:
        assert T >= 2 and D % 2 == 0 and D % H == 0 and D // H >= 2 and H >= 2


def test_the_fixed_examples_come_first_on_the_menu():
    shapes = []
    for example in PROBLEM.examples:
        T, D = example.args["x"].shape
        M = len(example.args["memory"])
        shapes.append((example.args["seed"], T, M, D, example.args["num_heads"]))
    assert shapes == list(STRATEGIES.SHAPES[: len(shapes)])


@settings(max_examples=30, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(PROBLEM.strategy())
def test_generated_inputs_are_as_the_statement_says(args):
    x, memory, H = args["x"], args["memory"], args["num_heads"]
    T, D = x.shape
    assert (args["seed"], T, memory.shape[0], D, H) in STRATEGIES.SHAPES
    assert x.dtype == np.float32 and memory.dtype == np.float32 and memory.shape[1] == D
    assert np.all(np.abs(x) <= 2) and np.all(np.abs(memory) <= 2)
