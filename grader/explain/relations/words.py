"""How a relation's message says numbers, indices, lists and the slices along an axis."""

from __future__ import annotations


def three_digits(x: float) -> str:
    """0.354, 1.37, 8: three significant digits."""
    return f"{x:.3g}"


def sci(x: float) -> str:
    """1.8e19, 3.9e-3: two significant digits, exponent without padding."""
    if x == 0 or 1e-2 <= abs(x) < 1e3:
        return f"{x:.2g}"
    m, ex = f"{x:.1e}".split("e")
    return f"{m}e{int(ex)}"


def percent(frac: float) -> str:
    """A fraction as a percentage: whole where it is 1% or more, one digit below."""
    p = 100.0 * frac
    return f"{p:.0f}%" if p >= 1 else f"{p:.1g}%"


def index_text(t) -> str:
    """An index as a message writes it: 3 for (3,), (1, 2) for (1, 2)."""
    if isinstance(t, tuple):
        return str(t[0]) if len(t) == 1 else "(" + ", ".join(str(i) for i in t) + ")"
    return str(t)


def listing(items, limit: int = 6) -> str:
    """``items`` as a reader lists them: "1, 2 and 3" (after ``limit`` of them, "and N more")."""
    items = [index_text(i) for i in items]
    if len(items) == 1:
        return items[0]
    if len(items) <= limit:
        return ", ".join(items[:-1]) + " and " + items[-1]
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"


def plural(word: str, k: int) -> str:
    return word if k == 1 else word + "s"


def subscript(ndim: int, exprs: dict) -> str:
    """``[:, j-1]``-style subscript: the given axes get their expression, the others ``:``."""
    if ndim == 0:
        return ""
    parts = [exprs.get(ax, ":") for ax in range(ndim)]
    if ndim > 2:
        lead = 0
        while lead < ndim and parts[lead] == ":":
            lead += 1
        if lead >= 2:
            parts = ["..."] + parts[lead:]
    return "[" + ", ".join(parts) + "]"


def axis_words(ndim: int, axis: int) -> tuple[str, str]:
    """(singular, plural) name of the slices along ``axis``."""
    if ndim >= 2 and axis == 0:
        return "row", "rows"
    if ndim == 2 and axis == 1:
        return "column", "columns"
    if ndim == 1:
        return "value", "values"
    return "slice", "slices"

