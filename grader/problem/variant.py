"""Known-wrong variants of a module problem, written as the one part they get wrong.

A variant file ``solutions/<slug>/pitfalls/<id>.py`` takes a private copy of the reference, subclasses
the part that is wrong and puts the subclass in the copy's place::

    from grader.problem.variant import override, reference_of

    MESSAGE = "..."
    reference = reference_of(__file__)


    class MultiHeadAttention(reference.MultiHeadAttention):
        def __call__(self, x, context, mask=None):
            ...  # MISTAKE: ...


    mini_t5_forward = override(reference, MultiHeadAttention)

The copy is private to the variant, so the reference itself and the other variants are untouched. The
reference's modules look their parts up by name when they build them, so the copy's entry runs the whole
model with the replaced part inside.
"""

from __future__ import annotations

import types
from pathlib import Path

from grader.problem.problems import load_module


def reference_of(variant_file: str):
    """A fresh copy of the reference of the problem whose ``solutions/<slug>/pitfalls/`` holds
    ``variant_file``."""
    solutions = Path(variant_file).resolve().parents[1]
    return load_module(solutions / f"{solutions.name}.py", f"{Path(variant_file).stem}_reference")


def override(reference, *parts):
    """Puts each class or function of ``parts`` in ``reference`` in place of the class or function of the
    same name, and returns ``reference``'s entry function (the one named after the problem). A correct
    alternative that writes some parts differently uses it too, so the module tree is declared once."""
    for part in parts:
        current = getattr(reference, part.__name__, None)
        if not (isinstance(part, type) and isinstance(current, type)
                or isinstance(part, types.FunctionType) and isinstance(current, types.FunctionType)):
            raise ValueError(f"the reference has no class or function named {part.__name__} to override")
        setattr(reference, part.__name__, part)
    return getattr(reference, Path(reference.__file__).stem)


def notes(path) -> tuple[str, str | None, str]:
    """A known-wrong variant's MESSAGE, DIAGNOSIS (or None) and STAGE (where its mistake may show besides
    the values: "values" where it says nothing), read without importing it."""
    return read_constant(path, "MESSAGE") or "", read_constant(path, "DIAGNOSIS"), read_constant(path, "STAGE") or "values"


def read_constant(path, name: str) -> str | None:
    """A string constant (``MESSAGE``, ``DIAGNOSIS``, ``STAGE``) of a variant module, read without importing it."""
    import ast

    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            value = ast.literal_eval(node.value)
            return value if isinstance(value, str) else None
    return None
