"""Every parameter counts: a parameter left at its initial value (a gain at ones, a bias at zeros) shows
once the grader moves the parameters, whatever style the file is written in; the parameter tree is
checked for NumPy files beside a spec module too; values drawn for another parameter are said, not taken
for a known mistake; and no mistake is named from the wrong evidence (`grade check`)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from grader.instructor import check

import parameter_styles  # noqa: E402  (tests/parameter_styles.py)

MOVED = "with every parameter moved from its initial value"


@pytest.mark.parametrize("problem, name, ignored", [
    ("rmsnorm", "rmsnorm_stub_ignores_gamma", ["gamma"]),
    ("rmsnorm", "rmsnorm_numpy_own_ones", ["gamma"]),
    ("rmsnorm", "rmsnorm_nnx_ignores_gamma", ["gamma"]),
    # The key's bias adds the same q_i . b to every score of query i, which the softmax takes away: moved
    # alone it changes no output, so it is not named (nor does leaving it out change anything).
    ("shaw_relative_attention", "shaw_numpy_forgets_biases", ["out/bias", "query/bias", "value/bias"]),
])
def test_an_ignored_parameter_fails_and_is_named_in_every_style(grade_json, tmp_path, problem, name, ignored):
    code, report = grade_json(problem, "--file", parameter_styles.write(name, tmp_path))
    assert code == 1 and report["status"] == "fail"
    assert MOVED in report["counterexample"]["call"]
    assert report["counterexample"]["inputs"]["@moved"] is True  # and the replay file keeps it
    diagnosis = report["diagnosis"]
    assert diagnosis["id"] == "parameters_not_followed"
    assert "At the parameters init gives, your output is right" in diagnosis["message"]
    said = diagnosis["message"].split("does not change when")[1].split("(the reference's does)")[0]
    assert sorted(re.findall(r"`([^`]+)`", said)) == ignored
    assert report["first_wrong_part"] is None  # a NumPy file's spec classes compute nothing: no part to blame


@pytest.mark.parametrize("problem, name, part", [
    # (t5_forward's norm, `weight` in Hugging Face's tree, is the same check at about twice the cost.)
    ("mini_t5_forward", "mini_t5_rmsnorm_ignores_gamma", "encoder_0/self_attn_norm"),
])
def test_a_norm_that_ignores_its_weight_fails_a_model_and_its_part_is_pointed_at(grade_json, tmp_path, problem, name, part):
    code, report = grade_json(problem, "--file", parameter_styles.write(name, tmp_path))
    assert code == 1 and MOVED in report["counterexample"]["call"]
    assert report["diagnosis"]["id"] == "parameters_not_followed"
    assert report["first_wrong_part"]["path"] == part


def test_grading_the_norm_alone_runs_it_on_moved_parameters(grade_json, tmp_path):
    learner = parameter_styles.write("mini_t5_rmsnorm_ignores_gamma", tmp_path)
    code, report = grade_json("mini_t5_forward", "--file", learner, "--part", "RMSNorm")
    assert code == 1 and report["status"] == "fail"
    assert report["first_wrong_part"]["path"].endswith("norm")


def test_code_with_no_parameters_the_grader_can_see_fails_and_is_told_so(grade_json, tmp_path):
    code, report = grade_json("rmsnorm", "--file", parameter_styles.write("rmsnorm_no_parameters", tmp_path))
    assert code == 1 and MOVED in report["counterexample"]["call"]
    [note] = [c for c in report["checks"] if c["name"] == "parameters"]
    assert note["status"] == "warn" and "creates no parameters the grader can see" in note["message"]
    assert "creates no parameters the grader can see" in report["diagnosis"]["message"]


@pytest.mark.parametrize("problem, name, lines", [
    ("shaw_relative_attention", "shaw_spec_tree_without_biases",
     [f"missing parameter params/{p}/bias (8,)" for p in ("key", "out", "query", "value")]),
    ("transformer_xl_attention", "txl_spec_extra_pos_bias", ["unexpected parameter params/pos_proj/bias (8,)"]),
])
def test_a_spec_module_beside_numpy_gets_the_parameter_check(grade_json, tmp_path, problem, name, lines):
    code, report = grade_json(problem, "--file", parameter_styles.write(name, tmp_path))
    assert code == 1
    assert report["params_diff"][1:] == lines


def test_values_drawn_for_another_parameter_are_said_and_no_mistake_is_named(grade_json, tmp_path):
    code, report = grade_json("transformer_xl_attention", "--file",
                              parameter_styles.write("txl_compact_v_before_u", tmp_path))
    assert code == 1
    assert report["pitfall"] is None  # u_and_v_swapped would send the learner to fix pairing code that is right
    assert report["diagnosis"]["id"] == "parameter_values"
    assert "your `u` holds the values the reference gives `v`" in report["diagnosis"]["message"]
    assert "create them in the stub's order" in report["diagnosis"]["message"]


def test_a_worker_that_lies_about_its_tree_and_stops_the_moving_still_fails(grade_json, tmp_path):
    code, report = grade_json("rmsnorm", "--file", parameter_styles.write("rmsnorm_hides_extra_beta", tmp_path))
    assert code == 1 and report["status"] == "fail"
    assert MOVED in report["counterexample"]["call"]


def test_every_statement_of_a_problem_with_parameters_says_they_are_moved():
    from grader.problem import problems
    from grader.problem.checkout import slugs
    for slug in slugs(ROOT):
        problem = problems.load(ROOT, slug)
        statement = (problem.folder / "README.md").read_text()
        said = "every generated input runs\nwith every parameter moved away from its initial value" in statement
        assert said == problem.moves_parameters, slug


# -- grade check: names from the right evidence ---------------------------------------------------------------

BROKEN = '''
[[pitfall]]
id = "negated"
doc = "The output negated; the comment after it swallows the reshape."
message = "Your output has the opposite sign."
replace = [{ old = "return y.astype(jnp.float32).reshape(-1)", new = "return (-y).astype(jnp.float32)  # MISTAKE: negated" }]
'''
DECLARED = BROKEN.replace('id = "negated"', 'id = "negated"\nstage = "shape"')
SAME = '''
[[pitfall]]
id = "squares_by_product"
doc = "x * x for jnp.square(x): the same function."
message = "Your output squares by a product."
replace = [{ old = "jnp.square(x)", new = "x * x" }]
'''


def rmsnorm_checkout(tmp_path: Path, pitfalls: str) -> Path:
    """A checkout holding rmsnorm alone, with ``pitfalls`` as its only known mistakes and no alternatives."""
    checkout = tmp_path / "checkout"
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part / "rmsnorm", checkout / part / "rmsnorm")
    shutil.rmtree(checkout / "solutions" / "rmsnorm" / "alternatives")
    (checkout / "solutions" / "rmsnorm" / "pitfalls.toml").write_text(pitfalls)
    return checkout


def test_check_flags_a_variant_that_fails_before_its_values_and_names_it_for_no_one(tmp_path, monkeypatch, grade_json):
    checkout = rmsnorm_checkout(tmp_path, BROKEN)
    monkeypatch.chdir(checkout)
    rows = {r.item: r for r in check.check_problem(checkout, "rmsnorm")}
    row = rows["pitfall negated"]
    assert not row.ok
    assert "fails on its shape" in row.detail and "before its values are compared" in row.detail
    assert "comments out the rest of its line" in row.detail and 'declare stage = "shape"' in row.detail


def test_a_declared_stage_is_accepted_by_the_check(tmp_path, monkeypatch):
    checkout = rmsnorm_checkout(tmp_path, DECLARED)
    monkeypatch.chdir(checkout)
    rows = {r.item: r for r in check.check_problem(checkout, "rmsnorm")}
    assert rows["pitfall negated"].ok, rows["pitfall negated"].detail


def test_a_learner_whose_shape_is_wrong_is_not_given_a_values_mistake(tmp_path, grade, monkeypatch):
    checkout = rmsnorm_checkout(tmp_path, BROKEN)
    learner = tmp_path / "rmsnorm.py"  # the shape wrong in the same way (not flat), the values right
    learner.write_text((ROOT / "solutions" / "rmsnorm" / "rmsnorm.py").read_text().replace(
        "return y.astype(jnp.float32).reshape(-1)", "return y.astype(jnp.float32)"))
    code, out, _ = grade("rmsnorm", "--file", learner, cwd=checkout)
    assert code == 1 and "FAIL" in out
    assert "Likely mistake" not in out and "opposite sign" not in out


def test_check_tells_a_variant_equal_to_the_reference_from_a_weak_strategy(tmp_path, monkeypatch):
    checkout = rmsnorm_checkout(tmp_path, SAME)
    monkeypatch.chdir(checkout)
    rows = {r.item: r for r in check.check_problem(checkout, "rmsnorm")}
    row = rows["pitfall squares_by_product"]
    assert not row.ok
    assert "it may be the same function as the reference" in row.detail
    assert "strengthen" not in row.detail


def test_code_that_crashes_while_making_its_parameters_is_not_said_to_make_none(grade, submission):
    """A crash inside init (here a shape error after gamma is made, as swapped arguments give): the error
    is the verdict; "your code creates no parameters" would be false, they were never reached."""
    body = (ROOT / "solutions" / "rmsnorm" / "rmsnorm.py").read_text()
    crashing = re.sub(r"(def __call__\(self, x[^\n]*\n(?:\s*\"\"\"[\s\S]*?\"\"\"\n)?)",
                      r"\1        self.param('extra', nn.initializers.ones, (3,)) @ jnp.ones((4,))\n", body, count=1)
    assert crashing != body
    code, out, _ = grade("rmsnorm", "--file", submission(crashing, "rmsnorm.py"))
    assert code == 1 and "ERROR" in out, out
    assert "creates no parameters" not in out, out
