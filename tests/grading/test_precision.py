"""Feedback that is never wrong and always points somewhere, on realistic submissions written in other
styles than the variants (tests/submissions/<problem>/, each with one mistake described in its
manifest): no wrong name ever; every mistake the statement lists named; every mini T5 mistake named or
located at its first wrong part; correct submissions pass.

A sample of each corpus runs here: of the function problems' (sinusoidal_pe, alibi_bias, t5_relative_pos,
t5_causal_relative_pos, rel_shift, rmsnorm), a correct file, the listed mistakes learners hit most, and a
diagnosis or an unlisted mistake where the corpus has one; of mini T5's, whose runs take seconds each,
a sample that covers each kind of part (a norm, an attention, a block's wiring, the top-level model, a
parameter shape) and a listed mistake; of t5_attention's, a sample with the two mistakes whose outputs are
a listed one's though written otherwise, and parts pointed at below the layer (the bucketing, a step of the
layer); of alibi_attention's, the accepted forms of the bias, alone and beside a mistake elsewhere (the
part then pointed at is that mistake's), and a wrong step; of rope's, rope_attention's and rope_scaled_angles', the
mistakes learners hit most (a layout, the sign, the offset, dynamic scaling's switch), a helper pointed at, a
diagnosis and correct files; and a few of T5's, of the bias module's, Shaw's and Transformer-XL's, steps
among them
(`benchmarks/feedback.py` runs every corpus whole, each known mistake of every problem among them, and prints
the tallies).
"""

from __future__ import annotations

import importlib.util
import json
import tomllib

import pytest

from conftest import ROOT

CORPUS = ROOT / "tests" / "submissions"
MINI_T5_SAMPLE = {"strict_causal_mask", "no_ffn_residual", "mask_after_softmax", "rmsnorm_over_tokens",
                  "head_rescaled_before_tied_embedding", "correct_einsum"}
T5_ATTENTION_SAMPLE = {"correct_hf_style", "bias_transposed_with_dot_T", "bias_indexed_with_batch_axis",
                       "upper_half_for_earlier_keys", "log_bucket_not_capped"}
T5_FORWARD_SAMPLE = {"correct_numpy_helpers", "bias_only_where_table"}
T5_RELATIVE_BIAS_SAMPLE = {"correct_python_loops", "queries_aligned_to_last_key", "log_buckets_unbounded_indexed",
                           "rounded_log_position", "swapaxes_heads_first"}
SHAW_SAMPLE = {"subtract_outer_query_minus_key", "clip_upper_bound_k_minus_one", "key_table_indexed_key_first",
               "value_table_indexed_key_first", "correct_inline"}
ALIBI_ATTENTION_SAMPLE = {"correct_bloom_key_positions", "correct_symmetric_distance", "bloom_rows_mask_forgotten",
                          "mpt_rows_counted_from_the_end", "slopes_of_eight_heads"}
ROPE_SAMPLE = {"flag_read_backwards", "partner_sign_flipped", "base_cast_to_int", "computed_in_bf16",
               "correct_permute_to_half", "correct_complex_lax"}
ROPE_ATTENTION_SAMPLE = {"correct_meta_converted_kernels", "correct_offset_one", "context_heads_first_reshaped",
                         "rotate_half_sign_swapped", "base_truncated_to_int"}
ROPE_SCALED_SAMPLE = {"ntk_exponent_flipped", "dynamic_from_max_position", "llama3_wavelength_in_radians",
                      "positions_from_one", "correct_switch_at_L"}
# Of the function problems, whose corpora are larger: a correct file, the listed mistakes learners hit most,
# a diagnosis or an unlisted mistake where the corpus has one.
SINUSOIDAL_SAMPLE = {"correct_sine_with_phase", "halves_like_marian", "cos_in_even_columns", "positions_start_at_one",
                     "bf16_model_dtype", "flax_wmt_sinusoidal_init_port"}
ALIBI_BIAS_SAMPLE = {"correct_bloom_rows_minus_diagonal", "slopes_over_all_heads", "query_minus_key", "mpt_alibi_port",
                     "slopes_stored_in_bf16", "heads_last_layout", "slopes_from_zero_over_all_heads"}
T5_RELATIVE_POS_SAMPLE = {"correct_plain_loops", "offset_query_minus_key", "no_cap_numpy", "hf_style_port_one_sided",
                          "python_round_in_loops", "boost_includes_diagonal"}
RMSNORM_SAMPLE = {"correct_nnx", "bfloat16_round_trip", "layernorm_mean_var", "mean_over_leading_axis",
                  "rsqrt_without_eps", "eps_hardcoded", "extra_beta"}
REL_SHIFT_SAMPLE = {"correct_pad_fold_stream", "offset_read_as_query_minus_key", "zero_appended_after_rows",
                    "dynamic_slice_from_minus_i"}
T5_CAUSAL_SAMPLE = {"correct_numpy_log2", "hf_bidirectional_default_loops", "causal_but_half_the_buckets",
                    "unbounded_log_buckets", "clamp_one_past_last"}
TRANSFORMER_XL_SAMPLE = {"biases_swapped", "cos_in_even_columns", "heads_split_interleaved", "mask_excludes_own_position",
                         "correct_rel_shift"}


def manifest(slug: str) -> dict[str, dict]:
    return tomllib.loads((CORPUS / slug / "manifest.toml").read_text())


def corpus(slug: str, sample: set[str] | None = None) -> list:
    return [pytest.param(slug, name, entry, id=f"{slug}/{name}") for name, entry in manifest(slug).items()
            if sample is None or name in sample]


@pytest.mark.parametrize("slug,name,entry", corpus("sinusoidal_pe", SINUSOIDAL_SAMPLE)
                         + corpus("alibi_bias", ALIBI_BIAS_SAMPLE) + corpus("t5_relative_pos", T5_RELATIVE_POS_SAMPLE)
                         + corpus("rmsnorm", RMSNORM_SAMPLE) + corpus("rel_shift", REL_SHIFT_SAMPLE)
                         + corpus("t5_causal_relative_pos", T5_CAUSAL_SAMPLE)
                         + corpus("mini_t5_forward", MINI_T5_SAMPLE) + corpus("t5_attention", T5_ATTENTION_SAMPLE)
                         + corpus("t5_forward", T5_FORWARD_SAMPLE) + corpus("t5_relative_bias", T5_RELATIVE_BIAS_SAMPLE)
                         + corpus("shaw_relative_attention", SHAW_SAMPLE)
                         + corpus("transformer_xl_attention", TRANSFORMER_XL_SAMPLE)
                         + corpus("alibi_attention", ALIBI_ATTENTION_SAMPLE)
                         + corpus("rope", ROPE_SAMPLE) + corpus("rope_attention", ROPE_ATTENTION_SAMPLE)
                         + corpus("rope_scaled_angles", ROPE_SCALED_SAMPLE))
def test_feedback_on_a_realistic_submission(grade_json, slug, name, entry):
    code, report = grade_json(slug, "--file", CORPUS / slug / f"{name}.py")
    named = report["pitfall"]["id"] if report["pitfall"] else None
    if not entry["mistake"]:
        assert (code, report["status"], named) == (0, "pass", None), report["message"]
        return
    assert code == 1 and report["status"] in ("fail", "error"), report["message"]  # wrong, or raising
    assert named in (None, entry.get("listed")), f"named {named} for: {entry['mistake']}"
    if "listed" in entry:
        assert named == entry["listed"], f"not named ({report['diagnosis']}): {entry['mistake']}"
    if "diagnosis" in entry:
        assert report["diagnosis"] is not None and report["diagnosis"]["id"] == entry["diagnosis"], report["diagnosis"]
    elif "part" in entry:
        part = report["first_wrong_part"]
        assert part is not None and part["path"] == entry["part"], (part, entry["mistake"])


SAMPLES = {"mini_t5_forward": MINI_T5_SAMPLE, "t5_attention": T5_ATTENTION_SAMPLE, "t5_forward": T5_FORWARD_SAMPLE,
           "t5_relative_bias": T5_RELATIVE_BIAS_SAMPLE, "shaw_relative_attention": SHAW_SAMPLE,
           "transformer_xl_attention": TRANSFORMER_XL_SAMPLE, "alibi_attention": ALIBI_ATTENTION_SAMPLE,
           "rope": ROPE_SAMPLE, "rope_attention": ROPE_ATTENTION_SAMPLE, "rope_scaled_angles": ROPE_SCALED_SAMPLE,
           "sinusoidal_pe": SINUSOIDAL_SAMPLE, "alibi_bias": ALIBI_BIAS_SAMPLE, "t5_relative_pos": T5_RELATIVE_POS_SAMPLE,
           "rmsnorm": RMSNORM_SAMPLE, "rel_shift": REL_SHIFT_SAMPLE, "t5_causal_relative_pos": T5_CAUSAL_SAMPLE}


def test_every_sample_names_submissions_of_its_corpus_and_holds_a_correct_one():
    for slug, sample in SAMPLES.items():
        entries = manifest(slug)
        assert sample <= set(entries), (slug, sample - set(entries))
        assert any(not entries[name]["mistake"] for name in sample), slug


def test_every_submission_is_in_its_manifest():
    for folder in (p for p in CORPUS.iterdir() if p.is_dir()):
        files = {p.stem for p in folder.glob("*.py")}
        assert files == set(manifest(folder.name)), folder.name


def test_one_part_is_graded_alone_whatever_the_rest_does(grade_json, grade):
    # The decoder's mask is wrong; the RMSNorm is right.
    path = CORPUS / "mini_t5_forward" / "strict_causal_mask.py"
    code, report = grade_json("mini_t5_forward", "--file", path, "--part", "RMSNorm")
    assert (code, report["status"]) == (0, "pass"), report["message"]
    code, report = grade_json("mini_t5_forward", "--file", path, "--part", "DecoderBlock")
    assert (code, report["status"]) == (1, "fail")
    assert report["first_wrong_part"]["path"] == "decoder_0"
    code, report = grade_json("mini_t5_forward", "--part", "FeedForward")  # the untouched stub
    assert report["status"] == "not_started"
    assert report["message"] == "your FeedForward still raises NotImplementedError: fill in its TODO"
    code, report = grade_json("mini_t5_forward", "--part", "RMSNorm")  # given complete in the stub
    assert (code, report["status"]) == (0, "pass")
    code, _, err = grade("mini_t5_forward", "--part", "LayerNorm")
    assert code == 2 and "RMSNorm, MultiHeadAttention" in err
    code, _, err = grade("t5_relative_pos", "--part", "RMSNorm")
    assert code == 2 and "no parts" in err


def test_a_helper_function_is_a_part_of_its_own(grade_json):
    # The bucketing rounds the log position where it should floor it; the module's lookup is right.
    path = CORPUS / "t5_relative_bias" / "rounded_log_position.py"
    code, report = grade_json("t5_relative_bias", "--file", path, "--part", "relative_position_bucket")
    assert (code, report["status"]) == (1, "fail")
    assert report["first_wrong_part"]["path"] == "relative_position_bucket"
    assert "run alone on the inputs the reference gave it" in report["first_wrong_part"]["message"]
    path = CORPUS / "t5_relative_bias" / "lookup_reshaped_to_heads.py"  # right buckets, a wrong lookup
    code, report = grade_json("t5_relative_bias", "--file", path, "--part", "relative_position_bucket")
    assert (code, report["status"]) == (0, "pass"), report["message"]


def test_an_extra_parameter_fails_on_the_tree_and_once_moved_in_the_outputs(grade_json):
    code, report = grade_json("rmsnorm", "--file", CORPUS / "rmsnorm" / "extra_beta.py")
    assert code == 1 and report["status"] == "fail"
    assert any("unexpected parameter" in line and "beta" in line for line in report["params_diff"])
    # beta starts at zeros, so the outputs differ only where the parameters are moved from their initial values
    assert "with every parameter moved from its initial value" in report["counterexample"]["call"]


def test_mini_t5_configurations_vary_every_size_on_its_own():
    spec = importlib.util.spec_from_file_location("mini_t5_strategies",
                                                  ROOT / "problems" / "mini_t5_forward" / "strategies.py")
    strategies = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(strategies)
    columns = list(zip(*strategies.SHAPES))
    names = ("seed", "vocab_size", "d_model", "num_heads", "d_ff", "num_enc_layers", "num_dec_layers",
             "T_enc", "T_dec")
    for name, values in zip(names, columns):
        assert len(set(values)) > 1, f"{name} never changes: code that hard-codes it passes"
    assert any(f != 2 * d for _, _, d, _, f, *_ in strategies.SHAPES), "d_ff is always 2 * d_model"
    assert any(v not in (d, f) for _, v, d, _, f, *_ in strategies.SHAPES), "vocab_size always equals another size"


def test_the_reference_s_parameter_tree_is_kept_and_an_unreadable_one_is_a_miss(grade_json, private_cache):
    path = CORPUS / "rmsnorm" / "extra_beta.py"
    grade_json("rmsnorm", "--file", path)
    [kept] = private_cache.glob("rmsnorm-trees-*.json")
    assert json.loads(kept.read_text())  # written by the run, read by the next
    for garbage in ("not json", '{"(0, (2, 3), None)": {"gamma": "three"}}'):
        kept.write_text(garbage)
        code, report = grade_json("rmsnorm", "--file", path)
        assert code == 1 and any("beta" in line for line in report["params_diff"])
