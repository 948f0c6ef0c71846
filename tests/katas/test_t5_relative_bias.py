"""t5_relative_bias: the input menu avoids exact bucket boundaries and varies every size, and the reference
behaves as the statement says.

A log-spaced bucket is floor(E + L * ln(d / E) / ln(max_distance / E)), with N buckets per direction,
E = N // 2 and L = N - E (N = num_buckets // 2 bidirectional, num_buckets one-directional). Where the value
inside the floor is a whole number, correct float32 and float64 programs may floor to neighbouring buckets,
that is read different rows of the table: no configuration the grader uses may meet such a size.
"""

import importlib.util
import math
import re

import numpy as np
import pytest

from conftest import ROOT
from grader.problem import problems

PROBLEM = problems.load(ROOT, "t5_relative_bias")
NAMES = ("seed", "q_len", "k_len", "num_heads", "num_buckets", "max_distance", "bidirectional")


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STRATEGIES = _load(PROBLEM.folder / "strategies.py", "t5_relative_bias_strategies")
PROPERTIES = _load(PROBLEM.folder / "properties.py", "t5_relative_bias_properties")
CONFIGS = STRATEGIES.CONFIGS
EXAMPLES = tuple(tuple(ex.args[name] for name in NAMES) for ex in PROBLEM.examples)


def per_direction(num_buckets, bidirectional):
    return num_buckets // 2 if bidirectional else num_buckets


def exact_boundaries(n, max_distance):
    """Sizes d with E < d < max_distance whose log position is a whole number, in integer arithmetic:
    E + L * ln(d / E) / ln(max_distance / E) == E + m exactly when d**L * E**m == max_distance**m * E**L."""
    E, L = n // 2, n - n // 2
    return [(d, m) for d in range(E + 1, max_distance) for m in range(1, L)
            if d**L * E**m == max_distance**m * E**L]


def test_the_boundary_test_finds_the_t5_defaults():
    """32 buckets, max_distance 128, bidirectional: sizes 16, 32 and 64 are whole numbers."""
    assert [d for d, _ in exact_boundaries(16, 128)] == [16, 32, 64]
    assert STRATEGIES.exact_boundaries(32, 128, True) != []


@pytest.mark.parametrize("config", CONFIGS + EXAMPLES, ids=lambda c: f"nb{c[4]}-md{c[5]}-{'bi' if c[6] else 'uni'}")
def test_no_configuration_meets_an_exact_bucket_boundary(config):
    *_, num_buckets, max_distance, bidirectional = config
    n = per_direction(num_buckets, bidirectional)
    assert n // 2 >= 1 and max_distance > n // 2, "max_distance must exceed the exact sizes"
    assert exact_boundaries(n, max_distance) == []
    assert STRATEGIES.exact_boundaries(num_buckets, max_distance, bidirectional) == []


@pytest.mark.parametrize("config", CONFIGS + EXAMPLES, ids=lambda c: f"nb{c[4]}-md{c[5]}-{'bi' if c[6] else 'uni'}")
def test_no_size_comes_near_a_bucket_boundary(config):
    """Far from whole numbers too, so that float32 and float64 rounding cannot move a bucket."""
    *_, num_buckets, max_distance, bidirectional = config
    n = per_direction(num_buckets, bidirectional)
    E, L = n // 2, n - n // 2
    for d in range(E + 1, max_distance):
        value = L * math.log(d / E) / math.log(max_distance / E)
        assert abs(value - round(value)) > 1e-3, d


def test_bidirectional_configurations_have_an_even_number_of_buckets():
    for config in CONFIGS + EXAMPLES:
        assert not config[6] or (config[4] % 2 == 0 and config[4] >= 4), config


def test_the_menu_varies_every_size():
    for i, name in enumerate(NAMES):
        assert len({c[i] for c in CONFIGS}) >= 2, f"{name} takes one value only"
    assert any(q < k for _, q, k, *_ in CONFIGS) and any(q > k for _, q, k, *_ in CONFIGS)
    assert any(q == k for _, q, k, *_ in CONFIGS)
    for bidirectional in (True, False):
        assert any(c[3] > 1 and c[6] == bidirectional for c in CONFIGS), "several heads in both rules"
    assert {c[4] % 2 for c in CONFIGS if not c[6]} == {0, 1}, "odd and even one-directional num_buckets"
    assert any(max(q, k) >= 2 * md for _, q, k, _, _, md, _ in CONFIGS), "no length well beyond max_distance"


def test_the_first_configurations_are_the_fixed_examples():
    shared = [c for c in EXAMPLES if c in CONFIGS]
    assert CONFIGS[:len(shared)] == tuple(shared)
    assert len(shared) >= 3


def test_the_statement_lists_the_menu():
    text = (PROBLEM.folder / "README.md").read_text()
    row = r"^  \|" + r" (\d+) +\|" * 6 + r" (true|false) +\|$"  # a row of the table of configurations
    rows = re.findall(row, text, re.M)
    listed = tuple(tuple(int(v) for v in row[:6]) + (row[6] == "true",) for row in rows)
    assert listed == CONFIGS


@pytest.fixture(scope="module")
def reference():
    return _load(PROBLEM.reference, "t5_relative_bias_reference")


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"seed{c[0]}")
def test_the_reference_has_every_property(reference, config):
    import jax

    run = jax.jit(reference.t5_relative_bias, static_argnums=tuple(range(len(NAMES))))  # as the grader runs it
    out = np.asarray(run(*config)).reshape(1, config[3], config[1], config[2])
    args = dict(zip(NAMES, config))
    for check in PROPERTIES.PROPERTIES:
        assert check(args, out) is None, check.__name__


def test_initialising_only_the_table_gives_the_values_init_would(reference):
    """The entry initialises the table alone (fast); model.init through __call__ must give the same values."""
    import jax

    model = reference.RelativePositionBias(num_buckets=10, num_heads=3, max_distance=6, bidirectional=True)
    full = model.init(jax.random.PRNGKey(3), 4, 7)
    alone = model.init(jax.random.PRNGKey(3), method=reference._table)
    assert jax.tree_util.tree_structure(full) == jax.tree_util.tree_structure(alone)
    np.testing.assert_array_equal(full["params"]["relative_attention_bias"]["embedding"],
                                  alone["params"]["relative_attention_bias"]["embedding"])


def test_the_worked_example_buckets(reference):
    """The bucket matrices the statement prints."""
    import jax.numpy as jnp

    def buckets(q_len, k_len, num_buckets, max_distance, bidirectional):
        offsets = jnp.arange(k_len)[None, :] - jnp.arange(q_len)[:, None]
        return np.asarray(reference.relative_position_bucket(offsets, bidirectional, num_buckets, max_distance))

    np.testing.assert_array_equal(buckets(3, 5, 8, 16, True), [[0, 5, 6, 6, 6], [1, 0, 5, 6, 6], [2, 1, 0, 5, 6]])
    far = buckets(10, 10, 8, 4, True)
    assert list(far[0]) == [0, 5, 6] + [7] * 7 and list(far[9]) == [3] * 7 + [2, 1, 0]
    assert np.all(buckets(1, 6, 10, 6, False) == 0)
