"""grader.sandbox.moved, in this process: which parameters move, how, and what observing them finds."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn
from flax import nnx

from grader.core import kinds
from grader.sandbox import moved


class Norm(nn.Module):
    @nn.compact
    def __call__(self, x):
        gamma = self.param("gamma", nn.initializers.ones, (x.shape[-1],))
        return nn.Dense(3, name="proj")(gamma * x)


class NnxNorm(nnx.Module):
    def __init__(self, d: int, rngs: nnx.Rngs):
        self.gamma = nnx.Param(jnp.ones((d,)))
        self.count = nnx.Variable(jnp.zeros((), jnp.int32))  # not a parameter: never moved


X = jnp.ones((2, 4))


def params(which):
    with moved.moving(which):
        return Norm().init(jax.random.PRNGKey(0), X)["params"]


def test_every_floating_parameter_moves_the_same_way_every_time_and_only_when_asked():
    plain, first, again = params(False), params(True), params(True)
    assert np.array_equal(plain["gamma"], np.ones(4))  # as init gives it
    for path, a, b, c in [("gamma", plain["gamma"], first["gamma"], again["gamma"]),
                          ("proj/bias", plain["proj"]["bias"], first["proj"]["bias"], again["proj"]["bias"])]:
        assert not np.allclose(a, b), path  # ones are no longer ones, zeros no longer zeros
        assert np.array_equal(b, c), path
        scale, shift = moved.offsets(path, a.shape)
        np.testing.assert_allclose(b, np.asarray(a) * (1 + scale) + shift, rtol=1e-6, atol=1e-7)


def test_a_list_of_paths_moves_those_alone():
    plain, some = params(False), params(("proj/bias",))
    assert np.array_equal(some["gamma"], plain["gamma"]) and np.array_equal(some["proj"]["kernel"], plain["proj"]["kernel"])
    assert not np.allclose(some["proj"]["bias"], plain["proj"]["bias"])


def test_parameters_traced_under_jit_move_as_eager_ones_do():
    eager = params(True)["gamma"]

    @jax.jit
    def traced(x):
        with moved.moving(True):
            return Norm().init(jax.random.PRNGKey(0), x)["params"]["gamma"]

    np.testing.assert_allclose(traced(X), eager, rtol=1e-6)


def test_init_with_output_and_lazy_init_move_their_parameters_once():
    expected = params(True)["gamma"]
    with moved.moving(True):
        _, variables = Norm().init_with_output(jax.random.PRNGKey(0), X)
        lazy = Norm().lazy_init(jax.random.PRNGKey(0), jax.ShapeDtypeStruct(X.shape, X.dtype))
    np.testing.assert_allclose(variables["params"]["gamma"], expected, rtol=1e-6)
    assert lazy["params"]["gamma"].shape == (4,)


def test_an_nnx_module_moves_its_params_by_their_paths_and_nothing_else():
    with moved.moving(True):
        module = NnxNorm(4, nnx.Rngs(0))
    np.testing.assert_allclose(module.gamma.get_value(), params(True)["gamma"], rtol=1e-6)  # same path, same move
    assert int(module.count.get_value()) == 0


def test_integer_leaves_do_not_move():
    with moved.moving(True):
        assert np.array_equal(moved.move_leaf("steps", jnp.arange(3)), np.arange(3))


def test_observing_finds_linen_and_nnx_parameters_of_every_init():
    ran = []

    def linen_entry():
        variables = Norm().init(jax.random.PRNGKey(0), X)
        ran.append("forward")  # reached: which init is the last is known only at the end
        return variables

    tree = moved.observe(linen_entry)
    assert sorted(tree) == ["params/gamma", "params/proj/bias", "params/proj/kernel"] and ran == ["forward"]
    assert sorted(moved.observe(lambda: NnxNorm(4, nnx.Rngs(0)))) == ["params/gamma"]
    assert moved.observe(lambda: jnp.ones(3)) is None


def test_parameters_from_two_top_level_modules_are_one_tree():
    """A file that builds its layer from two modules, each initialised: both halves are its tree."""
    two = moved.observe(lambda: (Norm().init(jax.random.PRNGKey(0), X), NnxNorm(4, nnx.Rngs(0))))
    assert sorted(two) == ["params/gamma", "params/proj/bias", "params/proj/kernel"]
    projection = moved.observe(lambda: (nn.Dense(3, name="q").init(jax.random.PRNGKey(0), X),
                                        nn.Embed(5, 2).init(jax.random.PRNGKey(1), jnp.arange(2))))
    assert sorted(projection) == ["params/bias", "params/embedding", "params/kernel"]


def test_under_jit_one_program_with_a_traced_weight_gives_initial_and_moved_parameters():
    traces = []

    @jax.jit
    def traced(weight, x):
        traces.append(1)
        with moved.moving(True, weight):
            return Norm().init(jax.random.PRNGKey(0), x)["params"]["gamma"]

    assert np.array_equal(traced(np.float32(0), X), params(False)["gamma"])  # exactly the initial values
    np.testing.assert_allclose(traced(np.float32(1), X), params(True)["gamma"], rtol=1e-6)
    assert len(traces) == 1


def test_a_case_mark_changes_the_digest_and_survives_a_case_file():
    from conftest import ROOT
    from grader.problem import problems
    from grader.problem.cases import case_from_json, case_to_json

    problem = problems.load(ROOT, "rmsnorm")
    args = problem.check_args({"seed": 0, "x": np.ones((2, 3), np.float32), "eps": 0.1})
    marked = problem.drawn_case(args)
    assert kinds.moved(marked) is True and kinds.moved(args) is False
    assert kinds.args_digest(problem.args, marked) != kinds.args_digest(problem.args, args)
    assert kinds.signature(problem.args, marked) == kinds.signature(problem.args, args)  # one traced program
    assert kinds.signature(problem.args, kinds.with_moved(args, ("gamma",))) != kinds.signature(problem.args, args)
    assert kinds.moved(case_from_json(problem, case_to_json(problem, marked))) is True
    one = kinds.with_moved(args, ("gamma",))
    assert kinds.moved(case_from_json(problem, case_to_json(problem, one))) == ("gamma",)
    assert "with gamma moved from its initial value" in problem.call_text(one)
    bucketing = problems.load(ROOT, "t5_relative_pos")
    assert not bucketing.moves_parameters and kinds.moved(bucketing.drawn_case(
        {"seed": 0, "T": 3, "num_buckets": 8, "max_distance": 16})) is False
