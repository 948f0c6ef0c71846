"""Relations of position, each read alone (grader/explain/relations/position.py): what each finds, and what
:func:`grader.explain.relations.diagnose` needs to choose among them (the axis, a roll, the general reading).
The messages, and the choice among relations, are tests/explain/test_relations.py's."""

from __future__ import annotations

import numpy as np

from grader.explain import ids
from grader.explain.relations import position
from grader.explain.relations.common import outputs

E = np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32)


def read(actual, expected=E, **tol):
    return outputs(expected, actual, {}, **({"rtol": 1e-5, "atol": 1e-6} | tol))


def test_a_transpose_is_of_two_axes_of_one_size():
    square = E[:, :5]
    assert position.transposed(read(square.T.copy(), square)).diagnosis.id == ids.TRANSPOSE
    assert position.transposed(read(E[::-1].copy())) is None


def test_a_reversal_names_its_axis():
    found = position.reversal(read(E[:, ::-1].copy()))
    assert (found.diagnosis.id, found.axis) == (ids.REVERSED_AXIS, 1)
    assert position.reversal(read(E * 2)) is None


def test_a_roll_is_a_shift_that_wraps_and_a_shift_with_zeros_does_not():
    rolled = position.shifted(read(np.roll(E, 1, axis=0)))
    assert (rolled.diagnosis.id, rolled.axis, rolled.wraps) == (ids.SHIFTED, 0, True)
    down = np.zeros_like(E)
    down[1:] = E[:-1]
    found = position.shifted(read(down))
    assert (found.axis, found.wraps) == (0, False) and "first row holds zeros" in found.diagnosis.message


def test_a_permutation_is_matched_by_content_along_one_axis():
    found = position.permuted(read(E[[1, 0, 2, 4, 3]]))
    assert (found.diagnosis.id, found.axis) == (ids.PERMUTED_AXIS, 0)
    assert position.permuted(read(E[[1, 0, 2, 4, 3]] + 1)) is None


def test_a_flattening_order_and_the_general_reading_are_told_apart_by_their_kind():
    flat = E.reshape(-1, order="F").reshape(E.shape)
    found = position.flatten_order(read(flat))
    assert (found.diagnosis.id, found.kind) == (ids.WRONG_ORDER, "flatten")
    scrambled = np.random.default_rng(1).permutation(E.ravel()).reshape(E.shape)
    assert position.flatten_order(read(scrambled)) is None
    found = position.wrong_order(read(scrambled))
    assert (found.diagnosis.id, found.kind) == (ids.WRONG_ORDER, "multiset")


def test_two_readings_of_one_kind_say_nothing():
    symmetric = E + E[::-1, ::-1]  # reversing the rows is reversing the columns
    found = position.reversal(read(symmetric[::-1].copy(), symmetric))
    assert found is not None and found.diagnosis is None
