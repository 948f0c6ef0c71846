"""How the relations' messages say numbers, indices, lists and axes (grader/explain/relations/words.py)."""

from __future__ import annotations

import pytest

from grader.explain.relations.words import (axis_words, index_text, listing, percent, plural, sci, subscript,
                                            three_digits)


def test_numbers_are_short():
    assert three_digits(0.35355339) == "0.354" and three_digits(8.0) == "8"
    assert (sci(1.8446744e19), sci(3.9e-3), sci(0.5), sci(0.0)) == ("1.8e19", "3.9e-3", "0.5", "0")
    assert (percent(0.5), percent(0.004)) == ("50%", "0.4%")


def test_indices_and_lists_read_as_a_sentence():
    assert (index_text((3,)), index_text((1, 2)), index_text(4)) == ("3", "(1, 2)", "4")
    assert listing([1]) == "1" and listing([1, 2, 3]) == "1, 2 and 3"
    assert listing([(0, 1), (2, 3)]) == "(0, 1) and (2, 3)"
    assert listing(range(9)) == "0, 1, 2, 3, 4, 5 and 3 more"
    assert (plural("row", 1), plural("row", 2)) == ("row", "rows")


@pytest.mark.parametrize("ndim, exprs, written", [
    (0, {}, ""), (1, {0: "i"}, "[i]"), (2, {1: "j-1"}, "[:, j-1]"),
    (3, {2: "i"}, "[..., i]"), (3, {1: "i", 2: "j"}, "[:, i, j]"),
])
def test_a_subscript_writes_only_the_axes_it_is_about(ndim, exprs, written):
    assert subscript(ndim, exprs) == written


def test_the_slices_along_an_axis_are_named_as_a_reader_sees_them():
    assert axis_words(2, 0) == ("row", "rows") and axis_words(2, 1) == ("column", "columns")
    assert axis_words(1, 0) == ("value", "values") and axis_words(3, 1) == ("slice", "slices")
    assert axis_words(3, 0) == ("row", "rows")
