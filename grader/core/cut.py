"""Text cut to a length: the one place a report, a message or the wire shortens a string."""

from __future__ import annotations


def cut(text: str, limit: int, mark: str = "...") -> str:
    """``text`` whole where it has at most ``limit`` characters, else its start and ``mark``, ``limit``
    characters in all."""
    return text if len(text) <= limit else text[:limit - len(mark)] + mark


def cut_middle(text: str | None, limit: int) -> str | None:
    """``text`` cut in the middle to about ``limit`` characters, saying how many were left out (both ends of
    a traceback or of printed output say the most)."""
    if text is None or len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]} [... {len(text) - 2 * keep} characters left out ...] {text[-keep:]}"
