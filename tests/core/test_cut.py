"""grader.core.cut: the one way text is shortened."""

from grader.core.cut import cut, cut_middle


def test_text_within_the_limit_is_kept_whole():
    assert cut("abcdef", 6) == "abcdef"
    assert cut("", 0) == ""
    assert cut_middle("abcdef", 6) == "abcdef"
    assert cut_middle(None, 3) is None


def test_a_cut_keeps_the_start_and_ends_with_the_mark_within_the_limit():
    assert cut("abcdefghij", 6) == "abc..."
    assert cut("abcdefghij", 8, " [...]") == "ab [...]"
    assert cut("abcdefghij", 9, "\nnote") == "abcd\nnote"
    for limit in range(3, 12):
        assert len(cut("x" * 20, limit)) == min(20, limit)


def test_a_middle_cut_keeps_both_ends_and_counts_what_it_left_out():
    text = "".join(chr(ord("a") + i % 26) for i in range(100))
    got = cut_middle(text, 20)
    assert got == f"{text[:10]} [... 80 characters left out ...] {text[-10:]}"
    assert cut_middle("x" * 21, 20) == "x" * 10 + " [... 1 characters left out ...] " + "x" * 10
