"""t5_forward: the generated shapes keep off exact bucket boundaries, vary every size, and the
reference's parameter tree is the one the statement prints (Hugging Face's T5 names).

Cheap checks only (no grading run): `tests/instructor/test_check.py` runs `grade check` on every problem.
"""

import importlib.util
import math

import numpy as np
import pytest

from conftest import ROOT
from grader.problem import problems

PROBLEM = problems.load(ROOT, "t5_forward")
SIZES = ("seed", "vocab_size", "d_model", "num_heads", "d_ff", "num_enc_layers", "num_dec_layers",
         "T_enc", "T_dec", "num_buckets", "max_distance")


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STRATEGIES = load(PROBLEM.root / "problems" / "t5_forward" / "strategies.py", "t5_forward_strategies")
SHAPES = [dict(zip(SIZES, shape)) for shape in STRATEGIES.SHAPES]


def whole_number_sizes(nb, max_distance):
    """Sizes d with nb // 2 < d < max_distance whose log-bucket value is exactly a whole number:
    max_exact + m with d**k * max_exact**m == max_distance**m * max_exact**k (k = nb - max_exact)."""
    me = nb // 2
    k = nb - me
    return [d for d in range(me + 1, max_distance) for m in range(1, k)
            if d**k * me**m == max_distance**m * me**k]


def test_the_boundary_test_finds_t5s_own_boundaries():
    # num_buckets = 32, max_distance = 128, bidirectional: nb = 16, sizes 16, 32 and 64
    assert whole_number_sizes(16, 128) == [16, 32, 64]


@pytest.mark.parametrize("num_buckets, max_distance", STRATEGIES.BUCKET_MENU)
def test_bucket_menu_has_no_exact_boundary_in_either_stack(num_buckets, max_distance):
    assert whole_number_sizes(num_buckets // 2, max_distance) == []  # encoder, bidirectional
    assert whole_number_sizes(num_buckets, max_distance) == []  # decoder, one-directional
    assert num_buckets % 2 == 0 and num_buckets >= 4 and max_distance > num_buckets // 2


def test_every_shape_draws_its_buckets_from_the_menu():
    assert {(s["num_buckets"], s["max_distance"]) for s in SHAPES} <= set(STRATEGIES.BUCKET_MENU)


def test_every_size_takes_more_than_one_value():
    for name in SIZES[1:]:
        assert len({s[name] for s in SHAPES}) > 1, name
    assert any(s["d_ff"] != 2 * s["d_model"] for s in SHAPES)
    assert all(s["T_enc"] != s["T_dec"] for s in SHAPES)
    assert any(s["num_enc_layers"] != s["num_dec_layers"] for s in SHAPES)


def bucket(offset, bidirectional, num_buckets, max_distance):
    nb = num_buckets // 2 if bidirectional else num_buckets
    boost = nb if bidirectional and offset > 0 else 0
    n = abs(offset) if bidirectional else max(-offset, 0)
    me = nb // 2
    if n < me:
        return boost + n
    return boost + min(nb - 1, me + math.floor((nb - me) * math.log(n / me) / math.log(max_distance / me)))


def buckets(shape, num_buckets, max_distance):
    enc = [bucket(r, True, num_buckets, max_distance) for r in range(1 - shape["T_enc"], shape["T_enc"])]
    dec = [bucket(r, False, num_buckets, max_distance) for r in range(1 - shape["T_dec"], 1)]
    return enc, dec


@pytest.mark.parametrize("name", ["num_buckets", "max_distance"])
def test_a_hard_coded_bucket_count_or_max_distance_fails_somewhere(name):
    """Using one shape's num_buckets or max_distance (or T5's 32 and 128) for every shape changes
    the buckets of some shape."""
    for constant in {s[name] for s in SHAPES} | {32 if name == "num_buckets" else 128}:
        changed = []
        for shape in SHAPES:
            pair = {"num_buckets": shape["num_buckets"], "max_distance": shape["max_distance"], name: constant}
            if pair["max_distance"] <= pair["num_buckets"] // 2:
                changed.append(True)  # the log's scale would be undefined: surely caught
                continue
            own = buckets(shape, shape["num_buckets"], shape["max_distance"])
            changed.append(buckets(shape, pair["num_buckets"], pair["max_distance"]) != own)
        assert any(changed), (name, constant)


@pytest.mark.parametrize("shape", SHAPES[:2], ids=["walk-through", "second example"])
def test_the_first_shapes_are_the_fixed_examples(shape):
    found = False
    for example in PROBLEM.examples:
        a = example.args
        sizes = dict(a, T_enc=len(a["x_enc_ids"]), T_dec=len(a["x_dec_ids"]))
        found |= all(sizes[name] == shape[name] for name in SIZES)
    assert found


def test_the_parameter_tree_has_hugging_faces_names():
    import jax
    import jax.numpy as jnp

    reference = load(PROBLEM.reference, "t5_forward_reference_tree")
    model = reference.T5Model(16, 8, 2, 16, 2, 2, 8, 6)
    placeholder = jax.ShapeDtypeStruct((2,), jnp.int32)
    shapes = jax.eval_shape(lambda: model.lazy_init(jax.random.PRNGKey(0), placeholder, placeholder))
    tree = {"/".join(k.key for k in path): leaf.shape
            for path, leaf in jax.tree_util.tree_flatten_with_path(shapes)[0]}
    assert tree["params/shared/embedding"] == (16, 8)
    assert tree["params/encoder/block_0/layer_0/SelfAttention/relative_attention_bias/embedding"] == (8, 2)
    assert tree["params/decoder/block_0/layer_0/SelfAttention/relative_attention_bias/embedding"] == (8, 2)
    assert tree["params/decoder/block_1/layer_1/EncDecAttention/q/kernel"] == (8, 8)
    assert tree["params/decoder/block_1/layer_2/DenseReluDense/wi/kernel"] == (8, 16)
    assert tree["params/encoder/block_1/layer_1/DenseReluDense/wo/kernel"] == (16, 8)
    assert tree["params/encoder/final_layer_norm/weight"] == (8,)
    tables = [path for path in tree if "relative_attention_bias" in path]
    assert len(tables) == 2  # one per stack, in block_0 only
    assert sum(int(np.prod(s)) for s in tree.values()) == 2816  # the statement's count


@pytest.mark.parametrize("slug", ["t5_forward", "mini_t5_forward"])
def test_token_ids_are_int32_and_a_case_saved_with_float_ids_still_replays(slug):
    """The ids are int32 arrays (drawn, in the examples); a case file written when they were float32 arrays
    of whole numbers reads back as the same case."""
    from grader.problem.cases import case_from_json, case_to_json

    problem = problems.load(ROOT, slug)
    args = problem.examples[0].args
    assert args["x_enc_ids"].dtype == np.int32 and args["x_dec_ids"].dtype == np.int32
    drawn = problem.validate_strategy()
    assert drawn["x_enc_ids"].dtype == np.int32 and drawn["x_dec_ids"].dtype == np.int32
    old = case_to_json(problem, args)
    for name in ("x_enc_ids", "x_dec_ids"):
        old[name] = {"dtype": "float32", "shape": old[name]["shape"], "data": [float(v) for v in old[name]["data"]]}
    back = case_from_json(problem, old)
    assert all(np.array_equal(back[name], args[name]) and back[name].dtype == np.int32
               for name in ("x_enc_ids", "x_dec_ids"))
