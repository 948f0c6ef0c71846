"""Find the checkout, list its problems and load one: metadata, strategy, stub and reference paths."""

from __future__ import annotations

import ast
import importlib.util
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # NumPy is imported where it is used: `grade` starts its workers before importing it
    import numpy as np

ARG_KINDS = ("int", "float")
ARRAY_DTYPES = ("float32", "float64", "int32", "int64")


class ProblemError(Exception):
    """A problem folder is missing or malformed (the instructor's mistake, not the learner's)."""


class UsageError(Exception):
    """The command line names something that does not exist."""


def find_root(start: Path | None = None) -> Path:
    """The checkout that holds ``problems/`` and ``solutions/``, from ``start`` or any folder inside it."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "problems").is_dir() and (folder / "solutions").is_dir():
            return folder
    installed = Path(__file__).resolve().parent.parent
    if (installed / "problems").is_dir() and (installed / "solutions").is_dir():
        return installed
    raise UsageError(f"no kata checkout (a folder with problems/ and solutions/) at or above {here}")


def cache_folder(root: Path) -> Path:
    """Where reference outputs, drawn inputs and compiled programs are kept (GRADE_CACHE_DIR overrides)."""
    return Path(os.environ.get("GRADE_CACHE_DIR") or root / ".grade" / "cache")


def slugs(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "problems").iterdir() if (p / "problem.toml").is_file())


@dataclass(frozen=True)
class Example:
    name: str
    args: dict
    expected: np.ndarray | None = None


@dataclass
class Problem:
    slug: str
    root: Path
    title: str
    args: dict[str, str]  # name -> "int" | "float" | "array:<dtype>"
    output_dtype: str
    output_shape: list[str]
    exact: bool
    rtol: float
    atol: float
    call_seconds: float
    problem_seconds: float
    memory_mib: int
    max_examples: int
    axis_names: list[str] | None = None  # names of the natural shape's axes, for reports
    examples: list[Example] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return self.root / "problems" / self.slug

    @property
    def solution_folder(self) -> Path:
        return self.root / "solutions" / self.slug

    @property
    def stub(self) -> Path:
        return self.folder / f"{self.slug}.py"

    @property
    def reference(self) -> Path:
        return self.solution_folder / f"{self.slug}.py"

    def variants(self, kind: str) -> dict[str, Path]:
        """``kind`` is "pitfalls" or "alternatives": name -> module path."""
        folder = self.solution_folder / kind
        if not folder.is_dir():
            return {}
        return {p.stem: p for p in sorted(folder.glob("*.py")) if not p.name.startswith("_")}

    def strategy(self):
        return load_module(self.folder / "strategies.py", f"strategies_{self.slug}").inputs()

    def hooks(self):
        """The optional ``solutions/<slug>/grading.py`` module, or None."""
        path = self.solution_folder / "grading.py"
        return load_module(path, f"grading_{self.slug}") if path.is_file() else None

    def properties(self):
        path = self.folder / "properties.py"
        return load_module(path, f"properties_{self.slug}") if path.is_file() else None

    def natural_shape(self, args: dict) -> tuple[int, ...]:
        shape: list[int] = []
        for expr in self.output_shape:
            value = evaluate_shape(expr, args)
            shape.extend(value if isinstance(value, tuple) else (value,))
        return tuple(shape)

    def flat_shape(self, args: dict) -> tuple[int]:
        return (math.prod(self.natural_shape(args)),)

    def check_args(self, args: dict) -> dict:
        """Coerce and validate one input dict against the declared argument kinds."""
        import numpy as np

        if set(args) != set(self.args):
            raise ProblemError(f"{self.slug}: inputs {sorted(args)} do not match the arguments {list(self.args)}")
        clean = {}
        for name, kind in self.args.items():
            value = args[name]
            if kind == "int":
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                    raise ProblemError(f"{self.slug}: argument {name} must be an int, got {value!r}")
                clean[name] = int(value)
            elif kind == "float":
                clean[name] = float(value)
            else:
                clean[name] = np.asarray(value, dtype=kind.split(":", 1)[1])
        return clean


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(root: Path, slug: str) -> Problem:
    folder = root / "problems" / slug
    if not (folder / "problem.toml").is_file():
        known = ", ".join(slugs(root)) or "none"
        raise UsageError(f"unknown problem {slug!r}; the problems are: {known}")
    try:
        meta = tomllib.loads((folder / "problem.toml").read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ProblemError(f"{slug}/problem.toml: {exc}") from None
    return from_metadata(root, slug, meta)


def from_metadata(root: Path, slug: str, meta: dict) -> Problem:
    import numpy as np

    where = f"problems/{slug}/problem.toml"

    def need(table: dict, key: str, types, context: str):
        if key not in table:
            raise ProblemError(f"{where}: {context}{key} is missing")
        if not isinstance(table[key], types) or isinstance(table[key], bool) and types is not bool:
            raise ProblemError(f"{where}: {context}{key} has the wrong type ({table[key]!r})")
        return table[key]

    if need(meta, "entry", str, "") != slug:
        raise ProblemError(f"{where}: entry {meta['entry']!r} must equal the folder name {slug!r}")
    args = need(meta, "args", dict, "")
    for name, kind in args.items():
        if kind not in ARG_KINDS and not (kind.startswith("array:") and kind[6:] in ARRAY_DTYPES):
            raise ProblemError(f"{where}: args.{name} = {kind!r}; use int, float or array:<{'|'.join(ARRAY_DTYPES)}>")
    output = need(meta, "output", dict, "")
    tolerance = need(meta, "tolerance", dict, "")
    limits = meta.get("limits", {})
    exact = bool(tolerance.get("exact", False))
    if not exact and not {"rtol", "atol"} <= set(tolerance):
        raise ProblemError(f"{where}: [tolerance] needs exact = true, or rtol and atol")
    shape = need(output, "shape", list, "output.")
    for expr in shape:
        check_shape_expression(expr, args, where)
    problem = Problem(
        slug=slug, root=root, title=need(meta, "title", str, ""), args=dict(args),
        output_dtype=need(output, "dtype", str, "output."), output_shape=shape, exact=exact,
        rtol=float(tolerance.get("rtol", 0.0)), atol=float(tolerance.get("atol", 0.0)),
        call_seconds=float(limits.get("call_seconds", 30)), problem_seconds=float(limits.get("problem_seconds", 120)),
        memory_mib=int(limits.get("memory_mib", 3072)),
        max_examples=int(meta.get("hypothesis", {}).get("max_examples", 25)),
        axis_names=output.get("axes"),
    )
    for i, ex in enumerate(meta.get("examples", [])):
        name = ex.get("name", f"example {i + 1}")
        ex_args = problem.check_args(need(ex, "args", dict, f"examples[{i}]."))
        expected = ex.get("expected")
        if expected is not None:
            expected = np.asarray(expected, dtype=problem.output_dtype)
            if expected.shape != problem.natural_shape(ex_args):
                raise ProblemError(f"{where}: examples[{i}].expected has shape {expected.shape}, "
                                   f"the output shape is {problem.natural_shape(ex_args)}")
        problem.examples.append(Example(name, ex_args, expected))
    return problem


# Shape expressions: a name, an int, + - * //, len(name), name.shape (spliced), parentheses.
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b}


def evaluate_shape(expr: str, args: dict):
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
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise ProblemError(f"{where}: shape expression {expr!r} is not an expression") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id != "len" and node.id not in args:
            raise ProblemError(f"{where}: shape expression {expr!r} names {node.id!r}, which is not an argument")


def relative(path) -> str:
    """``path`` relative to the current folder when it lies below it, else as given."""
    rel = os.path.relpath(path)
    return str(path) if rel.startswith("..") else rel
