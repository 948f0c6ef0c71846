"""What a kata teaches, and a pass that did without it.

A problem may declare the trick it is there to teach (``[teaches]`` in problem.toml: rel_shift's pad,
reshape and slice). A pass reached another way (a gather, a loop) is a right answer, so it stays a pass;
one line says that the kata's point was missed, read from the file's calls, never from running it.
"""

from __future__ import annotations

import ast


def called(source: bytes) -> set[str]:
    """The names of what ``source`` calls: ``f(...)`` and ``x.f(...)`` alike give ``f``."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
    return names


def note(teaches: dict, source: bytes) -> str | None:
    """One line for a pass whose code does without what the kata teaches (``teaches``: a problem's
    ``[teaches]`` table), or None: it calls what the trick calls and nothing the trick needs none of."""
    if not teaches:
        return None
    try:
        names = called(source)
    except (SyntaxError, ValueError):
        return None
    missing = [n for n in teaches["calls"] if n not in names]
    instead = [n for n in teaches.get("avoids", []) if n in names]
    if not missing and not instead:
        return None
    how = "; ".join(part for part in (f"it calls {', '.join(instead)}" if instead else "",
                                      f"it calls no {', '.join(missing)}" if missing else "") if part)
    return (f"your answer is right, but this kata teaches {teaches['what']}, and your code does without it "
            f"({how}): try it that way too")
