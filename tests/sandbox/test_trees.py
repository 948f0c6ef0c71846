"""Pytrees and argument lists as the worker handles them (:mod:`grader.sandbox.trees`)."""

from __future__ import annotations

import numpy as np

from grader.sandbox import trees


def test_a_tree_s_leaves_by_their_slash_separated_paths():
    tree = {"params": {"dense": {"kernel": np.ones((2, 3)), "bias": np.zeros(3)}}}
    flat = trees.flat_tree(tree)
    assert sorted(flat) == ["params/dense/bias", "params/dense/kernel"]
    assert flat["params/dense/kernel"].shape == (2, 3)


def test_static_and_dynamic_arguments_merge_back_in_order():
    assert trees.merge(["x", 3, "y", True], (1, 3), ["X", "Y"]) == ["X", 3, "Y", True]
    assert trees.merge([1, 2], (0, 1), []) == [1, 2]
