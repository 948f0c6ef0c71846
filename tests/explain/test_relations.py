"""Generic diagnoses from the relation between expected and actual (grader.explain.relations.diagnose).

Each relation gets a positive case built the way a learner's mistake would produce it, and the
mistakes that merely look similar must give None: a wrong diagnosis is worse than none.
"""

import re
import time

import numpy as np
import pytest

from grader.explain.relations import diagnose

RMS_TOL = dict(rtol=1e-5, atol=1e-6)  # problems/rmsnorm/problem.toml
T5_TOL = dict(rtol=1e-4, atol=1e-5)  # problems/mini_t5_forward/problem.toml
EXACT = dict(rtol=0.0, atol=0.0, exact=True)  # problems/t5_relative_pos/problem.toml
MODEL_ARGS = {"seed": 0, "vocab_size": 16, "d_model": 8, "num_heads": 2, "d_ff": 16,
              "num_enc_layers": 2, "num_dec_layers": 2,
              "x_enc_ids": np.array([0, 3, 7, 1], np.float32), "x_dec_ids": np.array([5, 2, 8], np.float32)}

def rng(seed=0):
    return np.random.default_rng(seed)


def check_message(m):
    """One or two plain sentences (three at most), no control characters, no stray whitespace."""
    assert isinstance(m, str) and m.strip() == m and len(m) > 20, repr(m)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", m), repr(m)
    assert m.isascii(), m
    assert m[-1] in ".?", m
    assert len(re.findall(r"[.?](?:\s|$)", m)) <= 3, m


def found(d, ident):
    """The diagnosis is ``ident``, with a well-formed message; returns the message."""
    assert d is not None, f"expected {ident}, got None"
    assert d.id == ident, d
    check_message(d.message)
    return d.message


# ------------------------------------------------------------------------------ realistic computations


def rmsnorm(x, eps, dtype=np.float32):
    """RMSNorm over the last axis, computed in ``dtype`` like the reference."""
    x = np.asarray(x, dtype)
    with np.errstate(all="ignore"):
        ms = np.mean(x * x, axis=-1, keepdims=True)
        return (x / np.sqrt(ms + dtype(eps))).astype(np.float32)


def to_bf16(x):
    """Round float32 to the nearest bfloat16 (ties to even), kept as float32."""
    b = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


def rmsnorm_bf16(x, eps):
    """Cast to bfloat16, compute (rounding after every step), cast back."""
    xb = to_bf16(x)
    ms = to_bf16(np.mean(to_bf16(xb * xb), axis=-1, keepdims=True))
    root = to_bf16(np.sqrt(to_bf16(ms + to_bf16(np.float32(eps)))))
    return to_bf16(xb / root)


def rows_at_scales(scales, d=6, seed=0):
    unit = rng(seed).uniform(-1, 1, (len(scales), d))
    return (unit * np.asarray(scales, float)[:, None]).astype(np.float32)


def buckets(T, num_buckets, max_distance, *, swap=False, offset=0):
    """T5's bidirectional buckets (statement's formula); ``swap`` boosts j < i, ``offset`` adds to j - i."""
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    r = (i - j if swap else j - i) + offset
    half = num_buckets // 2
    exact = half // 2
    s = np.abs(r)
    with np.errstate(divide="ignore"):
        log = exact + np.floor((half - exact) * np.log(np.maximum(s, exact) / exact)
                               / np.log(max_distance / exact))
    b = np.where(s < exact, s, np.minimum(half - 1, log))
    return (np.where(r > 0, half, 0) + b).astype(np.float32)


def softmax(x, stable=True):
    x = np.asarray(x, np.float32)
    with np.errstate(all="ignore"):
        z = np.exp(x - x.max(axis=-1, keepdims=True) if stable else x)
        return (z / z.sum(axis=-1, keepdims=True)).astype(np.float32)


def logits(seed=0, T=3, V=16, D=8):
    r = rng(seed)
    y = r.normal(size=(T, D)).astype(np.float32)
    emb = r.normal(size=(V, D)).astype(np.float32)
    return y, emb, (y @ emb.T).astype(np.float32)


# ------------------------------------------------------------------------------------------- nothing


@pytest.mark.parametrize("exact", [False, True])
def test_identical_outputs_give_none(exact):
    e = buckets(8, 8, 3) if exact else rmsnorm(rows_at_scales([1, 1e-4, 0, 30]), 1e-6)
    tol = EXACT if exact else RMS_TOL
    assert diagnose(e, e.copy(), {"seed": 0}, **tol) is None
    assert diagnose(e.astype(np.int32), e.astype(np.int32), {}, **tol) is None


def test_mismatched_shapes_or_empty_give_none():
    e = np.ones((2, 3), np.float32)
    assert diagnose(e, np.ones((3, 2), np.float32), {}, **RMS_TOL) is None
    assert diagnose(np.ones((0,), np.float32), np.ones((0,), np.float32), {}, **RMS_TOL) is None


# ---------------------------------------------------------------------------------- constant factor


def test_missing_scale_factor_names_the_argument():
    _, _, e = logits()
    a = (e * np.float32(8 ** -0.5)).astype(np.float32)  # Hugging Face's d_model ** -0.5 before the tied head
    msg = found(diagnose(e, a, MODEL_ARGS, **T5_TOL), "constant_factor")
    assert "0.354" in msg and "1/sqrt(8)" in msg and "d_model" in msg


def test_factor_with_two_readings_lists_both():
    _, _, e = logits(1)
    msg = found(diagnose(e, (e / np.float32(2)).astype(np.float32), MODEL_ARGS, **T5_TOL), "constant_factor")
    assert "1/2" in msg and "num_heads" in msg
    assert "1/sqrt(4)" in msg and "d_model // num_heads" in msg  # 1/sqrt(head_dim) is the other reading
    assert "num_enc_layers" not in msg.split("; or")[1]  # one quotient per number, not every coincidence


def test_sum_instead_of_mean_is_a_factor_of_the_last_axis():
    x = rows_at_scales([1, 5, 0.3], d=5)
    e = rmsnorm(x, 1e-6)
    with np.errstate(all="ignore"):
        a = (x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + np.float32(1e-6))).astype(np.float32)
    msg = found(diagnose(e, a, {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL), "constant_factor")
    assert "1/sqrt(5)" in msg and "x.shape[-1]" in msg


def test_sign_flip():
    _, _, e = logits(2)
    msg = found(diagnose(e, -e, MODEL_ARGS, **T5_TOL), "constant_factor")
    assert "opposite sign" in msg


def test_unreadable_factor_shared_by_distinct_rows():
    _, _, e = logits(3)
    msg = found(diagnose(e, (e * np.float32(1.37)).astype(np.float32), {"seed": 0}, **T5_TOL), "constant_factor")
    assert "1.37" in msg


def test_constant_offset_is_not_a_factor():
    _, _, e = logits(4)
    assert diagnose(e, e + np.float32(0.1), MODEL_ARGS, **T5_TOL) is None


def test_factor_that_holds_for_all_values_but_one_gives_none():
    _, _, e = logits(5)
    a = (e * np.float32(8 ** -0.5)).astype(np.float32)
    a[1, 7] = e[1, 7]
    assert diagnose(e, a, MODEL_ARGS, **T5_TOL) is None


def test_factor_carried_by_one_value_or_on_zeros_gives_none():
    e = np.zeros((4, 8), np.float32)
    e[0, 0] = 100.0
    e[2, 3] = 1e-7
    a = e * np.float32(0.5)
    assert diagnose(e, a, MODEL_ARGS, **T5_TOL) is None  # mostly zeros, and one value carries the fit
    e2 = np.full((3, 4), 1e-7, np.float32)
    e2[0, 0] = 100.0
    assert diagnose(e2, e2 * np.float32(0.5), MODEL_ARGS, **T5_TOL) is None


def test_per_row_factor_on_copied_rows_is_not_called_global():
    # all decoder ids equal: every row is the same, so a missing per-row norm looks like one factor
    _, _, e = logits(6, T=1)
    e = np.repeat(e, 3, axis=0)
    assert diagnose(e, (e * np.float32(1.33)).astype(np.float32), MODEL_ARGS, **T5_TOL) is None


def test_abs_on_negative_values_is_not_a_sign_flip():
    e = -np.abs(rng(32).normal(size=(3, 4))).astype(np.float32) - 0.1  # every expected value negative
    assert diagnose(e, np.abs(e), MODEL_ARGS, **T5_TOL) is None  # -1 and abs() cannot be told apart
    assert diagnose(e, e * e, MODEL_ARGS, **T5_TOL) is None


def test_a_factor_seen_on_one_size_only_gives_none():
    e = np.array([[0, 3, 3], [3, 0, 3], [0, 0, 3]], np.float32)  # one nonzero size: any f(3) is a factor
    assert diagnose(e, e * e, {"seed": 0, "T": 3}, **RMS_TOL) is None


def test_single_row_needs_a_named_factor():
    # one row: a per-row norm is indistinguishable from a factor, unless an argument names it
    e = np.array([0.3, -1.2, 2.0, 0.7], np.float32)
    assert diagnose(e, (e * np.float32(1.37)).astype(np.float32), {"seed": 0}, **RMS_TOL) is None
    assert diagnose(e, (e / np.float32(5 ** 0.5)).astype(np.float32), {"seed": 0}, **RMS_TOL) is None
    msg = found(diagnose(e, (e / np.float32(2)).astype(np.float32), {"seed": 0, "x": np.zeros((2, 4))},
                         **RMS_TOL), "constant_factor")
    assert "x.shape[0]" in msg


# -------------------------------------------------------------------------------- reduced precision


def test_rmsnorm_cast_to_bfloat16_and_back():
    x = rows_at_scales([1, 7, 0.3, 250], d=6, seed=1)
    e = rmsnorm(x, 1e-6)
    msg = found(diagnose(e, rmsnorm_bf16(x, 1e-6), {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL),
                "reduced_precision")
    assert "bfloat16" in msg and "exactly a bfloat16 number" in msg


def test_rmsnorm_in_bfloat16_with_jax():
    jnp = pytest.importorskip("jax.numpy")
    x = rows_at_scales([2, 0.5, 40], d=8, seed=2)
    xb = jnp.asarray(x).astype(jnp.bfloat16)
    ms = jnp.mean(xb * xb, axis=-1, keepdims=True)
    a = np.asarray((xb / jnp.sqrt(ms + 1e-6)).astype(jnp.float32))
    msg = found(diagnose(rmsnorm(x, 1e-6), a, {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL), "reduced_precision")
    assert "bfloat16" in msg


def test_input_rounded_to_bfloat16_then_float32_math():
    # no signature (the outputs are float32 numbers), but errors of bfloat16 size everywhere
    x = rows_at_scales([1, 3, 0.2, 9, 50, 0.7, 2, 4], d=16, seed=3)
    e = rmsnorm(x, 1e-6)
    msg = found(diagnose(e, rmsnorm(to_bf16(x), 1e-6), {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL),
                "reduced_precision")
    assert "bfloat16" in msg and "8 bits" in msg and "exactly" not in msg


def test_attention_weights_in_float16():
    r = rng(7)
    scores = r.normal(size=(6, 6)).astype(np.float32)
    v = r.normal(size=(6, 8)).astype(np.float32)
    e = (softmax(scores) @ v).astype(np.float32)
    w16 = softmax(scores).astype(np.float16).astype(np.float32)
    a = (w16 @ v).astype(np.float32)
    msg = found(diagnose(e, a, {"seed": 0, "d_model": 8}, **T5_TOL), "reduced_precision")
    assert "float16" in msg and "bfloat16" not in msg


def test_wrong_eps_moves_a_few_rows_and_is_not_reduced_precision():
    x = rows_at_scales([1, 1e-4, 20, 3, 0.5, 600], d=6, seed=4)  # one tiny-norm row
    e = rmsnorm(x, 1e-6)
    assert diagnose(e, rmsnorm(x, 1e-5), {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL) is None


def test_wrong_eps_on_small_rows_everywhere_is_not_reduced_precision():
    # every row small enough for eps to shift it by ~1e-3: errors everywhere, of bfloat16 size, but
    # one-sided and a per-row rescaling, which rounding is not
    x = rows_at_scales([0.05] * 8, d=6, seed=5)
    e = rmsnorm(x, 1e-6, np.float64)
    assert diagnose(e, rmsnorm(x, 1e-5, np.float64), {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL) is None


def test_random_noise_gives_none():
    _, _, e = logits(8)
    r = rng(8)
    assert diagnose(e, r.normal(size=e.shape).astype(np.float32), MODEL_ARGS, **T5_TOL) is None
    noisy = (e * (1 + r.normal(scale=0.05, size=e.shape))).astype(np.float32)
    assert diagnose(e, noisy, MODEL_ARGS, **T5_TOL) is None


def test_small_errors_on_large_rows_are_not_rounding_when_small_rows_are_wrong():
    # rows at very different scales: errors look small against the array, not against their own row
    x = rows_at_scales([1e3, 2e-3, 5e2, 1e-3], d=4, seed=33)
    assert diagnose(x, np.sort(x, axis=-1), {"seed": 0}, **RMS_TOL) is None
    assert diagnose(x, x + np.float32(1), {"seed": 0}, **RMS_TOL) is None


def test_half_right_answer_gives_none():
    _, _, e = logits(9, T=6)
    a = e.copy()
    a[3:] = rng(9).normal(size=a[3:].shape)
    assert diagnose(e, a, MODEL_ARGS, **T5_TOL) is None
    b = e.copy()
    b[:, ::2] *= np.float32(0.5)  # half the values scaled
    assert diagnose(e, b, MODEL_ARGS, **T5_TOL) is None


# ------------------------------------------------------------------------------------------ positions


def test_bucket_matrix_transposed():
    e = buckets(6, 8, 16)
    a = buckets(6, 8, 16, swap=True)  # boost for keys before the query
    assert np.array_equal(a, e.T)
    msg = found(diagnose(e, a, {"seed": 0, "T": 6, "num_buckets": 8, "max_distance": 16}, **EXACT), "transpose")
    assert "actual[i, j] == expected[j, i]" in msg


def test_last_two_axes_swapped():
    e = rng(10).normal(size=(2, 4, 4)).astype(np.float32)
    msg = found(diagnose(e, np.swapaxes(e, -1, -2).copy(), {"seed": 0}, **RMS_TOL), "transpose")
    assert "last two axes" in msg


def test_rows_permuted():
    x = rows_at_scales([1, 2, 3, 4, 5], d=4, seed=11)
    e = rmsnorm(x, 1e-6)
    a = e[[2, 1, 0, 4, 3]]  # rows gathered with the wrong indices
    msg = found(diagnose(e, a, {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL), "permuted_axis")
    assert "rows" in msg and "axis 0" in msg
    assert "rows 0 and 2 are swapped, and so are rows 3 and 4" in msg


def test_two_rows_swapped():
    _, _, e = logits(12, T=4)
    msg = found(diagnose(e, e[[0, 3, 2, 1]], MODEL_ARGS, **T5_TOL), "permuted_axis")
    assert "rows 1 and 3 are swapped" in msg


def test_rows_in_a_cycle_name_where_each_comes_from():
    _, _, e = logits(31, T=5)
    msg = found(diagnose(e, e[[2, 0, 1, 3, 4]], MODEL_ARGS, **T5_TOL), "permuted_axis")
    assert "row 0 holds what row 2 should, row 1 holds what row 0 should, row 2 holds what row 1 should" in msg
    msg = found(diagnose(e, e[[2, 0, 1, 4, 3]], MODEL_ARGS, **T5_TOL), "permuted_axis")
    assert "5 of 5 rows are out of place (row 0 holds row 2, row 1 holds row 0" in msg


def test_permutation_along_an_inner_axis_names_the_axis():
    e = rng(34).normal(size=(2, 3, 4)).astype(np.float32)
    msg = found(diagnose(e, e[:, [1, 0, 2], :], {"seed": 0}, **RMS_TOL), "permuted_axis")
    assert "along axis 1" in msg and "slices 0 and 1 are swapped" in msg


def test_columns_reversed():
    _, _, e = logits(13)
    msg = found(diagnose(e, e[:, ::-1].copy(), MODEL_ARGS, **T5_TOL), "reversed_axis")
    assert "reversed along axis 1" in msg


def test_rows_reversed_is_not_reported_as_a_permutation():
    _, _, e = logits(14, T=5)
    msg = found(diagnose(e, e[::-1].copy(), MODEL_ARGS, **T5_TOL), "reversed_axis")
    assert "axis 0" in msg and "row 0 holds what row 4 should" in msg


def test_bucket_offset_off_by_one_is_a_shift():
    e = buckets(8, 8, 16)
    a = buckets(8, 8, 16, offset=-1)  # r = j - i - 1: actual[i, j] == expected[i, j-1]
    msg = found(diagnose(e, a, {"seed": 0, "T": 8, "num_buckets": 8, "max_distance": 16}, **EXACT), "shifted")
    assert "shifted by 1" in msg and "actual[:, i] == expected[:, i-1]" in msg


def test_shift_by_one_filled_with_zeros():
    _, _, e = logits(15, T=5)
    a = np.zeros_like(e)
    a[1:] = e[:-1]  # a causal shift applied to the output
    msg = found(diagnose(e, a, MODEL_ARGS, **T5_TOL), "shifted")
    assert "axis 0" in msg and "down" in msg and "first row holds zeros" in msg


def test_rolled_rows():
    _, _, e = logits(16, T=5)
    msg = found(diagnose(e, np.roll(e, -1, axis=0), MODEL_ARGS, **T5_TOL), "shifted")
    assert "wrap-around" in msg


def test_logits_flattened_column_by_column():
    _, _, e = logits(17)  # (T_dec, V) = (3, 16)
    flat = e.reshape(-1, order="F")  # what the learner returned
    msg = found(diagnose(e, flat.reshape(e.shape), MODEL_ARGS, **T5_TOL), "wrong_order")
    assert "column by column" in msg and ".reshape(-1)" in msg


def test_right_values_in_scrambled_order():
    _, _, e = logits(18)
    a = rng(18).permutation(e.ravel()).reshape(e.shape)
    msg = found(diagnose(e, a, MODEL_ARGS, **T5_TOL), "wrong_order")
    assert "other positions" in msg


def test_few_distinct_values_shuffled_is_not_wrong_order():
    e = buckets(6, 8, 16)
    a = rng(19).permutation(e.ravel()).reshape(e.shape)
    assert diagnose(e, a, {"seed": 0, "T": 6}, **EXACT) is None


def test_off_by_some_rows_gives_none():
    _, _, e = logits(20, T=6)
    a = e.copy()
    a[3] = e[2]  # one row repeated in place of the next
    a[4] = e[3]
    assert diagnose(e, a, MODEL_ARGS, **T5_TOL) is None


def test_two_relations_that_fit_equally_give_none():
    m = rng(21).normal(size=(4, 4)).astype(np.float32)
    anti = m - m.T  # negating it is also transposing it
    assert diagnose(anti, -anti, {"seed": 0}, **RMS_TOL) is None


# ---------------------------------------------------------------------------------------- non-finite


def test_nan_on_all_zero_rows():
    x = rows_at_scales([0, 2, 5, 0, 0.5], d=4, seed=22)
    e = rmsnorm(x, 1e-6)
    a = rmsnorm(x, 0.0)  # no eps
    msg = found(diagnose(e, a, {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL), "nonfinite")
    assert "where x is all zeros (rows 0 and 3)" in msg and "nowhere else" in msg
    assert "denominator away from zero" in msg


def test_nan_on_a_zero_input_of_rank_one():
    x = np.zeros(4, np.float32)
    msg = found(diagnose(rmsnorm(x, 1e-6), rmsnorm(x, 0.0), {"x": x, "eps": 1e-6}, **RMS_TOL), "nonfinite")
    assert "Every value is NaN" in msg and "x is all zeros" in msg


def test_inf_where_the_squares_underflow():
    x = rows_at_scales([1, 1e-24, 3], d=4, seed=23)  # the squares of row 1 round to 0 in float32
    e = rmsnorm(x, 1e-6, np.float64)
    msg = found(diagnose(e, rmsnorm(x, 0.0), {"x": x, "eps": 1e-6}, **RMS_TOL), "nonfinite")
    assert "(row 1)" in msg and "squares round to 0" in msg


def test_nan_where_exp_overflows():
    x = rows_at_scales([1, 3, 2, 5], d=5, seed=24)
    x[1, 2] = 120.0
    x[3, 0] = 95.0
    e = softmax(x)
    msg = found(diagnose(e, softmax(x, stable=False), {"seed": 0, "x": x}, **RMS_TOL), "nonfinite")
    assert "rows 1 and 3" in msg and "88.7" in msg and "exp" in msg


def test_overflowing_squares_turn_rows_to_zero():
    x = rows_at_scales([1, 3e19, 2, 5e19], d=4, seed=25)
    e = rmsnorm(x, 1e-6, np.float64)  # a reference that does not overflow
    a = rmsnorm(x, 1e-6)  # float32: the mean square is inf, x / inf is 0
    assert np.all(a[[1, 3]] == 0)
    msg = found(diagnose(e, a, {"seed": 0, "x": x, "eps": 1e-6}, **RMS_TOL), "overflow")
    assert "rows 1 and 3" in msg and "1.8e19" in msg


def test_values_above_the_exp_limit_in_every_row_say_nothing():
    x = rows_at_scales([100, 300], d=4, seed=35) + np.float32(200)  # every row has values above 88.7
    a = softmax(x, stable=False)  # NaN where exp overflows, 0 elsewhere: part of every row
    assert np.isnan(a).any() and not np.isnan(a).all()
    assert diagnose(softmax(x), a, {"seed": 0, "x": x}, **RMS_TOL) is None


def test_every_value_nan():
    _, _, e = logits(26)
    msg = found(diagnose(e, np.full_like(e, np.nan), MODEL_ARGS, **T5_TOL), "nonfinite")
    assert "Every one of the 48 values is NaN" in msg


def test_nan_on_rows_where_a_token_id_is_zero():
    _, _, e = logits(27)
    ids = np.array([5, 0, 8], np.float32)
    a = e.copy()
    a[1] = np.nan
    args = dict(MODEL_ARGS, x_dec_ids=ids, x_enc_ids=np.array([1, 2], np.float32))
    msg = found(diagnose(e, a, args, **T5_TOL), "nonfinite")
    assert "where x_dec_ids is 0 (row 1)" in msg


def test_nan_above_the_diagonal():
    e = rng(28).normal(size=(5, 5)).astype(np.float32)
    a = e.copy()
    a[np.triu_indices(5, 1)] = np.nan
    msg = found(diagnose(e, a, {"seed": 0}, **RMS_TOL), "nonfinite")
    assert "above the diagonal" in msg and "10 of 25" in msg and "(0, 1)" in msg


def test_scattered_nan_or_nan_with_other_errors_gives_none():
    _, _, e = logits(29)
    a = e.copy()
    a[0, 3] = np.nan
    a[2, 9] = np.inf
    assert diagnose(e, a, MODEL_ARGS, **T5_TOL) is None
    x = rows_at_scales([0, 2, 1e-4], d=4, seed=29)  # a zero row and a tiny one
    assert diagnose(rmsnorm(x, 1e-6), rmsnorm(x, 0.0), {"x": x, "eps": 1e-6}, **RMS_TOL) is None


# ------------------------------------------------------------------------------------------ the rest


def test_large_arbitrary_answer_is_cheap_and_none():
    r = rng(30)
    e = r.normal(size=(64, 64)).astype(np.float32)
    a = e.copy()
    a[::3] = r.normal(size=a[::3].shape)
    start = time.perf_counter()
    assert diagnose(e, a, {"seed": 0, "x": e}, **RMS_TOL) is None
    assert time.perf_counter() - start < 2.0


def test_message_form_is_checked_for_every_relation():
    # found() checks each positive case's message; this one shows the check rejects what it should
    for bad in ("", "no full stop", "a\x1b[2Jcontrol character.", "trailing space. "):
        with pytest.raises(AssertionError):
            check_message(bad)


# ------------------------------------------------------------------------------------------ residual

def attention_like(seed: int = 0, T: int = 6, D: int = 8):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(T, D)).astype(np.float32)
    e = np.tanh(x @ rng.normal(size=(D, D))).astype(np.float32)  # stands for what the layer computes
    return x, e


def test_a_residual_added_inside_the_layer_is_said():
    x, e = attention_like()
    msg = found(diagnose(e, (e + x).astype(np.float32), {"seed": 0, "x": x, "num_heads": 2}, **T5_TOL), "residual_added")
    assert "plus the input x" in msg


def test_a_residual_left_out_is_said():
    x, e = attention_like(1)
    msg = found(diagnose(e, (e - x).astype(np.float32), {"x": x}, **T5_TOL), "residual_missing")
    assert "minus the input x" in msg and "missing" in msg


def test_no_residual_is_read_into_an_input_near_zero_or_a_partial_match():
    x, e = attention_like(2)
    tiny = np.zeros_like(x)
    tiny[0, 0] = 1.0  # one value apart: no evidence
    assert diagnose(e, (e + tiny).astype(np.float32), {"x": tiny}, **T5_TOL) is None
    half = (e + x).astype(np.float32)
    half[3:] = e[3:] * 2 + 1  # the residual explains the first rows only
    d = diagnose(e, half, {"x": x}, **T5_TOL)
    assert d is None or d.id not in ("residual_added", "residual_missing")
