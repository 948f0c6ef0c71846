"""The language of ``output.shape`` in problem.toml: each entry an expression over the arguments.

An entry is a name, an int, + - * //, ``len(name)``, ``name.shape`` (spliced into the shape),
``name.size``, and parentheses. :func:`check_shape_expression` refuses anything else when the problem is
loaded, before any input exists; :func:`evaluate_shape` computes an entry on one input.
"""

from __future__ import annotations

import ast

from grader.core import kinds
from grader.problem.errors import ProblemError

_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b}


def evaluate_shape(expr: str, args: dict):
    """The value of the entry ``expr`` on the arguments ``args``: an int, or a tuple for ``x.shape``."""
    import numpy as np

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return int(args[node.id]) if not isinstance(args[node.id], np.ndarray) else args[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1:
            return len(ev(node.args[0]))
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "size"):
            value = getattr(ev(node.value), node.attr)
            return tuple(int(s) for s in value) if node.attr == "shape" else int(value)
        raise ProblemError(f"shape expression {expr!r}: {ast.dump(node)} is not allowed")

    return ev(ast.parse(expr, mode="eval"))


def check_shape_expression(expr: str, args: dict, where: str) -> None:
    """What ``evaluate_shape`` accepts, checked before any input exists: ints are int arguments or
    literals, and ``len``, ``.shape`` and ``.size`` apply to array arguments."""
    def fail(text: str) -> ProblemError:
        return ProblemError(f"{where}: output.shape entry {expr!r} {text}")

    def name(node, array: bool) -> bool:
        if node.id not in args:
            raise fail(f"names {node.id!r}, which is not an argument")
        fits = kinds.kind(args[node.id]).wire == "array" if array else args[node.id] == "int"
        if not fits:
            raise fail(f"uses {node.id!r} ({args[node.id]}) as {'an array' if array else 'an int'}")
        return True

    def ok(node) -> bool:
        if isinstance(node, ast.Constant):
            return type(node.value) is int
        if isinstance(node, ast.Name):
            return name(node, array=False)
        if isinstance(node, ast.BinOp):
            return type(node.op) in _BINOPS and ok(node.left) and ok(node.right)
        if isinstance(node, ast.Call):
            return (isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1
                    and not node.keywords and isinstance(node.args[0], ast.Name) and name(node.args[0], array=True))
        if isinstance(node, ast.Attribute):
            return node.attr in ("shape", "size") and isinstance(node.value, ast.Name) and name(node.value, array=True)
        return False

    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise fail("is not an expression") from None
    if not ok(tree.body):
        raise fail("is not allowed; use argument names, ints, + - * //, len(x), x.shape or x.size")


def splices(shape: list[str]) -> bool:
    """Whether an entry of ``shape`` is ``x.shape``, whose value adds as many axes as ``x`` has."""
    return any(isinstance(node, ast.Attribute) and node.attr == "shape"
               for expr in shape for node in ast.walk(ast.parse(expr, mode="eval")))
