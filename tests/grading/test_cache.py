"""What is kept on disk between runs, alone: keyed by the fingerprint and the sources, read back exactly,
and a file that cannot be read is a miss, never an error or a stale answer."""

from __future__ import annotations

import numpy as np

from grader.grading import cache

KINDS = {"seed": "int", "x": "array:float32"}


def test_a_key_changes_with_any_source_and_nothing_else(tmp_path):
    source = tmp_path / "reference.py"
    source.write_text("def f(): pass\n")
    key = cache.file_key(source, "20")
    assert cache.file_key(source, "20") == key
    assert cache.file_key(source, "21") != key
    source.write_text("def f(): return 1\n")
    assert cache.file_key(source, "20") != key


def test_reference_outputs_are_kept_and_a_damaged_file_is_a_miss(tmp_path):
    source = tmp_path / "reference.py"
    source.write_text("x = 1\n")
    kept = cache.ReferenceCache(tmp_path, "ref", [source])
    kept.put("a", np.arange(3, dtype=np.float32))
    kept.save()
    again = cache.ReferenceCache(tmp_path, "ref", [source])
    assert np.array_equal(again.get("a"), np.arange(3, dtype=np.float32)) and again.get("b") is None
    kept.path.write_bytes(b"not an archive")
    assert cache.ReferenceCache(tmp_path, "ref", [source]).entries == {}
    source.write_text("x = 2\n")  # another reference: another file, nothing of the first
    assert cache.ReferenceCache(tmp_path, "ref", [source]).get("a") is None


def test_parameter_trees_keep_only_well_formed_entries(tmp_path):
    source = tmp_path / "reference.py"
    source.write_text("x = 1\n")
    trees = cache.TreeCache(tmp_path, "ref", [source])
    trees["reference", "(2, 3)"] = {"params/w": [3, 4]}
    trees["learner", "(2, 3)"] = {"params/w": [1]}  # never written: only the reference's are kept
    trees.save()
    again = cache.TreeCache(tmp_path, "ref", [source])
    assert dict(again) == {("reference", "(2, 3)"): {"params/w": [3, 4]}}
    again.path.write_text('{"(2, 3)": {"params/w": "not a shape"}}')
    assert dict(cache.TreeCache(tmp_path, "ref", [source])) == {}


def test_drawn_inputs_come_back_as_their_kinds_or_not_at_all(tmp_path):
    path = tmp_path / "inputs.npz"
    cases = [{"seed": 3, "x": np.ones((2, 2), np.float32)}, {"seed": 4, "x": np.zeros((0, 2), np.float32)}]
    cache.save_inputs(path, cases)
    back = cache.load_inputs(path, KINDS)
    assert [c["seed"] for c in back] == [3, 4] and all(type(c["seed"]) is int for c in back)
    assert back[1]["x"].shape == (0, 2) and back[1]["x"].dtype == np.float32
    assert cache.load_inputs(path, {"seed": "int", "y": "array:float32"}) is None  # another signature: drawn again
    path.write_bytes(b"truncated")
    assert cache.load_inputs(path, KINDS) is None
