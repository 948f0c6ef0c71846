"""Feedback that teaches: the mistake is named, the input shrunk, the case replayable, the diff readable,
weak strategies caught by `grade check`."""

import shutil

from conftest import REFERENCE, ROOT
from grader.instructor import check
from grader.problem import problems

BUCKETS = REFERENCE["t5_relative_pos"].read_text()


def test_swapped_direction_is_named_in_json_and_first_lines(grade_json, grade):
    path = problems.load(ROOT, "t5_relative_pos").variants("pitfalls")["swapped_direction"]
    code, report = grade_json("t5_relative_pos", "--file", path)
    assert code == 1 and report["pitfall"]["id"] == "swapped_direction"
    assert report["pitfall"]["message"]
    _, out, _ = grade("t5_relative_pos", "--file", path)
    assert "Likely mistake (swapped_direction)" in "\n".join(out.splitlines()[:2])


def test_a_bug_only_generated_inputs_reach_is_shrunk_to_the_smallest_case(grade_json, submission):
    # Wrong only where T > 30: no fixed example reaches it; the smallest failing T is 31.
    late = BUCKETS + '''

_right = t5_relative_pos


def t5_relative_pos(seed, T, num_buckets, max_distance):
    out = _right(seed, T, num_buckets, max_distance)
    return out.at[0].add(1.0) if T > 30 else out
'''
    code, report = grade_json("t5_relative_pos", "--file", submission(late))
    assert code == 1 and report["status"] == "fail"
    cx = report["counterexample"]
    assert cx["name"] == "generated"
    assert cx["inputs"]["T"] == 31
    assert cx["diff"]["mismatches"] == 1 and cx["diff"]["first_index"] == [0, 0]


def test_an_unknown_mistake_names_no_pitfall(grade_json, submission):
    odd = BUCKETS.replace("return bucket.astype", "return (bucket * 0 + 3).astype")
    code, report = grade_json("t5_relative_pos", "--file", submission(odd))
    assert code == 1 and report["pitfall"] is None


def test_property_checks_explain_a_broken_matrix(grade_json, submission):
    odd = BUCKETS.replace("return bucket.astype", "return (bucket + pos[:, None]).astype")
    _, report = grade_json("t5_relative_pos", "--file", submission(odd))
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["property: depends only on offset"]["status"] == "fail"
    assert "j - i" in checks["property: depends only on offset"]["message"]


def test_code_that_cannot_be_jitted_passes_with_a_warning(grade_json):
    path = ROOT / "solutions" / "rmsnorm" / "alternatives" / "numpy_float64.py"  # numpy on tracers fails
    code, report = grade_json("rmsnorm", "--file", path)
    assert code == 0 and report["status"] == "pass"
    jit = [c for c in report["checks"] if c["name"] == "jit"][0]
    assert jit["status"] == "warn" and "jax.jit" in jit["message"]


def test_check_tells_the_instructor_which_mistake_a_weak_strategy_lets_through(tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    for part in ("problems", "solutions"):
        shutil.copytree(ROOT / part / "t5_relative_pos", checkout / part / "t5_relative_pos")
    problem_dir = checkout / "problems" / "t5_relative_pos"
    # Short sequences only: the clamp never matters, so the no-clamp mistake goes unseen.
    (problem_dir / "strategies.py").write_text('''from hypothesis import strategies as st


def inputs():
    return st.fixed_dictionaries({"seed": st.just(0), "T": st.integers(1, 3),
                                  "num_buckets": st.sampled_from([8, 16]), "max_distance": st.integers(9, 20)})
''')
    toml = problem_dir / "problem.toml"
    toml.write_text(toml.read_text().split("[[examples]]")[0])  # no fixed examples either
    pitfalls = checkout / "solutions" / "t5_relative_pos" / "pitfalls.toml"
    entries = pitfalls.read_text().split("[[pitfall]]")
    pitfalls.write_text("[[pitfall]]".join(entries[:1] + [e for e in entries[1:] if e.startswith(
        ('\nid = "no_clamp"', '\nid = "swapped_direction"'))]))
    shutil.rmtree(checkout / "solutions" / "t5_relative_pos" / "alternatives")
    monkeypatch.chdir(checkout)
    rows = {r.item: r for r in check.check_problem(checkout, "t5_relative_pos")}
    assert rows["pitfall swapped_direction"].ok
    assert not rows["pitfall no_clamp"].ok
    assert "slipped through" in rows["pitfall no_clamp"].detail
    assert check.main(["t5_relative_pos"]) == 1


def test_check_asks_a_failing_variant_for_no_more_than_naming_it_needs():
    """`grade check` grades each known-wrong variant in the reference's worker. A variant agrees with its
    own outputs everywhere, so naming it asks every variant only for its output on the failing input (a
    learner's submission is tried on the other inputs too: the naming tests above); and a failing
    variant's parameter tree, which cannot change its verdict, is not traced."""
    from functools import partial

    from grader.explain import diagnosis
    from grader.grading.engine import Options, grade
    from grader.grading.trusted import Trusted

    for slug, name in (("t5_relative_pos", "swapped_direction"), ("rmsnorm", "eps_outside_sqrt")):
        problem = problems.load(ROOT, slug)
        trusted = Trusted(problem, use_cache=False, golden_pitfalls=False)  # as `grade check` does
        try:
            verdict = grade(problem, problem.variants("pitfalls")[name], Options(), trusted=trusted,
                            extra=partial(diagnosis.explain, name_only=True), subject_key=f"pitfall_{name}")
            assert verdict.status == "fail" and verdict.pitfall.id == name
            failing = trusted.digest(verdict.counterexample.args)
            asked = {key: list(cache.entries) for (key, _), cache in trusted.caches.items()
                     if key != "reference" and cache.entries}
            assert set(asked) == {f"pitfall_{n}" for n in problem.variants("pitfalls")}
            assert all(digests == [failing] for digests in asked.values()), asked
            assert not verdict.params_diff and not [key for key, _ in trusted.trees if key != "reference"]
        finally:
            trusted.close()


def test_a_changed_parameter_tree_is_reported_first_by_path(grade_json, grade, submission):
    reference = REFERENCE["mini_t5_forward"].read_text()
    renamed = reference.replace("self.up", "self.hidden")  # a submodule renamed: new path, new params
    assert renamed != reference
    path = submission(renamed, name="mini_t5_forward.py")
    code, out, _ = grade("mini_t5_forward", "--file", path, "--replay",
                         write_case(path.parent))
    assert code == 1
    head = "\n".join(out.splitlines()[:4])
    assert "parameter tree differs" in head
    assert "missing parameter params/encoder_0/ffn/up/kernel (4, 16)" in out
    assert "unexpected parameter params/encoder_0/ffn/hidden/kernel (4, 16)" in out


def write_case(folder):
    """A small mini-T5 case file, as `--replay` takes it."""
    import json

    ids = lambda *v: {"dtype": "float32", "shape": [len(v)], "data": list(map(float, v))}  # noqa: E731
    case = {"problem": "mini_t5_forward", "args": {
        "seed": 0, "x_enc_ids": ids(1, 2, 3), "x_dec_ids": ids(4, 5), "vocab_size": 8, "d_model": 4,
        "num_heads": 2, "d_ff": 16, "num_enc_layers": 1, "num_dec_layers": 1}}
    path = folder / "case.json"
    path.write_text(json.dumps(case))
    return path
