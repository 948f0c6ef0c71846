"""A problem: its metadata, strategy, stub and reference paths, and loading one from its folder.

Every file an instructor writes is checked where it is read, and every mistake in one is a
ProblemError: one sentence that names the file and the key (or what importing it raised), never a
traceback, so that `grade` can print it and exit 2. The checkout around the problems is
:mod:`grader.problem.checkout`; problem.toml's reader :mod:`grader.problem.metadata`, its shape language
:mod:`grader.problem.shapes`; the variants written from pitfalls.toml :mod:`grader.problem.pitfalls`.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from grader.core import kinds
from grader.problem import metadata
from grader.problem.checkout import unknown_problem
from grader.problem.errors import ProblemError, UsageError, describe, one_line, shown, shown_path
from grader.problem.pitfalls import declared_pitfalls
from grader.problem.shapes import evaluate_shape

# Named here too until their callers import them from grader.problem.checkout.
from grader.problem.checkout import cache_folder

if TYPE_CHECKING:  # NumPy is imported where it is used: `grade` starts its workers before importing it
    import numpy as np


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
    args: dict[str, str]  # name -> a kind (grader.core.kinds.kind): "int" | "bool" | "float" | "str[:a|b]" | "array:<dtype>"
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
    # Array arguments whose axis (the value) holds the positions of the output's rows (its first axis): which
    # row depends on which position is compared with the reference's (grader.explain.dependence).
    positions: dict[str, int] = field(default_factory=dict)
    examples: list[Example] = field(default_factory=list)
    # [teaches]: the trick the kata teaches ("what"), as the functions a solution with it calls and those it
    # needs none of; a pass without it says so (grader.explain.teaches): a note, never a failure.
    teaches: dict = field(default_factory=dict)
    # The instructor's modules, imported once: what a run trusts is read before learner code starts.
    _modules: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def folder(self) -> Path:
        return self.root / "problems" / self.slug

    @property
    def solution_folder(self) -> Path:
        return self.root / "solutions" / self.slug

    @property
    def handout(self) -> bool:
        """Whether this is a handout's problem: graded from answers recorded in ``recorded.npz``."""
        return not self.solution_folder.is_dir() and (self.folder / "recorded.npz").is_file()

    @property
    def stub(self) -> Path:
        return self.folder / f"{self.slug}.py"

    @property
    def reference(self) -> Path:
        return self.solution_folder / f"{self.slug}.py"

    def parts(self) -> list[str]:
        """The Flax module classes the stub asks the learner to write, in the stub's order (read without
        importing it): the parts of a model that can be checked, and graded, one at a time."""
        if "parts" not in self._modules:
            self._modules["parts"] = [
                node.name for node in self._stub_tree().body if isinstance(node, ast.ClassDef)
                and any((b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None)) == "Module"
                        for b in node.bases)]
        return self._modules["parts"]

    def helpers(self) -> list[str]:
        """The functions beside the entry that the stub asks the learner to write (a TODO body that raises
        NotImplementedError, as the bucketing in the attention katas), in the stub's order: parts too, whose
        calls in the reference's forward pass the first wrong part replays on the learner's function."""
        if "helpers" not in self._modules:
            self._modules["helpers"] = [
                node.name for node in self._stub_tree().body if isinstance(node, ast.FunctionDef)
                and node.name != self.slug and not node.name.startswith("_") and is_todo(node)]
        return self._modules["helpers"]

    def methods(self) -> list[str]:
        """The methods of the stub's parts, other than ``__call__`` and ``setup``, that the stub asks the learner
        to write (a TODO body that raises NotImplementedError), as ``Class.method`` in the stub's order: the
        steps of one layer (its scores, its weights), parts too, so that a mistake inside a layer is pointed at
        the step that holds it."""
        if "methods" not in self._modules:
            classes = [node for node in self._stub_tree().body
                       if isinstance(node, ast.ClassDef) and node.name in self.parts()]
            self._modules["methods"] = [
                f"{cls.name}.{node.name}" for cls in classes for node in cls.body
                if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and node.name != "setup"
                and is_todo(node)]
        return self._modules["methods"]

    def part_names(self) -> list[str]:
        """Every name `grade --part` takes: the module classes, their methods to write, the helper functions."""
        return self.parts() + self.methods() + self.helpers()

    def _stub_tree(self) -> ast.Module:
        """The untouched stub (:mod:`grader.problem.pristine`: what the learner edits has lost its TODOs once
        they are filled in), parsed, not imported; the stub as it is where no untouched copy is found (a
        problem being written), and an empty module where it does not read."""
        if "stub tree" not in self._modules:
            from grader.problem import pristine

            try:
                source = pristine.stub(self.root, self.slug, cache_folder(self.root))[0] or self.stub.read_bytes()
                self._modules["stub tree"] = ast.parse(source)
            except (OSError, SyntaxError, ValueError):
                self._modules["stub tree"] = ast.Module(body=[], type_ignores=[])
        return self._modules["stub tree"]

    def variants(self, kind: str) -> dict[str, Path]:
        """``kind`` is "pitfalls" or "alternatives": name -> module path, sorted by name. Pitfalls are the
        files under ``pitfalls/`` and the entries of ``pitfalls.toml``, each written out as a module."""
        folder = self.solution_folder / kind
        found = {p.stem: p for p in folder.glob("*.py") if not p.name.startswith("_")} if folder.is_dir() else {}
        if kind == "pitfalls":
            if "declared" not in self._modules:
                self._modules["declared"] = declared_pitfalls(self)
            for name, path in self._modules["declared"].items():
                if name in found:
                    raise ProblemError(f"{shown_path(self.solution_folder / 'pitfalls.toml', self.root)}: pitfall "
                                       f"{name!r} is also the file {shown_path(found[name], self.root)}; keep one")
                found[name] = path
        return dict(sorted(found.items()))

    def strategy(self):
        """The Hypothesis strategy that ``strategies.py``'s ``inputs()`` returns."""
        from hypothesis.strategies import SearchStrategy

        path = self.folder / "strategies.py"
        where = shown_path(path, self.root)
        inputs = getattr(_import(path, f"strategies_{self.slug}", self.root), "inputs", None)
        if not callable(inputs):
            raise ProblemError(f"{where}: inputs is not defined; it must be a function returning a Hypothesis strategy")
        try:
            strategy = inputs()
        except (Exception, SystemExit) as exc:
            raise ProblemError(f"{where}: inputs() raised {describe(exc, path)}") from None
        if not isinstance(strategy, SearchStrategy):
            raise ProblemError(f"{where}: inputs() returned {shown(strategy)}, not a Hypothesis strategy")
        return strategy

    def validate_strategy(self) -> dict:
        """Draw one input from the strategy (its simplest, the same every run) and check it against the
        arguments; returns it, checked. Composite strategies run the instructor's code only when drawn,
        so this is where a strategy that raises or draws a wrong value shows."""
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis.errors import Unsatisfiable

        strategy = self.strategy()
        path = self.folder / "strategies.py"
        where = shown_path(path, self.root)
        drawn = []

        @settings(max_examples=1, derandomize=True, database=None, deadline=None, phases=(Phase.generate,),
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)
        @given(strategy)
        def draw(args):
            drawn.append(args)

        try:
            draw()
        except Unsatisfiable:
            raise ProblemError(f"{where}: inputs() draws nothing (its filters reject every draw, or it is empty)") from None
        except (Exception, SystemExit) as exc:
            raise ProblemError(f"{where}: drawing from inputs() raised {describe(exc, path)}") from None
        return self._coerce(drawn[0], f"{where}: what inputs() draws",
                            lambda name: f"{where}: the argument {name} that inputs() draws")

    def hooks(self):
        """The optional ``solutions/<slug>/grading.py`` module, or None (imported once)."""
        if "hooks" not in self._modules:
            self._modules["hooks"] = self._hooks()
        return self._modules["hooks"]

    def properties(self):
        """The optional ``properties.py`` module, whose ``PROPERTIES`` lists its checks, or None
        (imported once)."""
        if "properties" not in self._modules:
            self._modules["properties"] = self._properties()
        return self._modules["properties"]

    def _hooks(self):
        path = self.solution_folder / "grading.py"
        if not path.is_file():
            return None
        module = _import(path, f"grading_{self.slug}", self.root)
        for hook in ("accept_also", "borderline", "canonical_part"):
            if hasattr(module, hook) and not callable(getattr(module, hook)):
                raise ProblemError(f"{shown_path(path, self.root)}: {hook} must be a function")
        return module

    def _properties(self):
        path = self.folder / "properties.py"
        if not path.is_file():
            return None
        module = _import(path, f"properties_{self.slug}", self.root)
        if not hasattr(module, "PROPERTIES"):
            raise ProblemError(f"{shown_path(path, self.root)}: PROPERTIES is not defined; it must be a list of "
                               "functions (args, output) -> a sentence or None")
        checks = module.PROPERTIES
        if not isinstance(checks, (list, tuple)) or not all(callable(c) for c in checks):
            raise ProblemError(f"{shown_path(path, self.root)}: PROPERTIES must be a list of functions "
                               f"(args, output) -> a sentence or None, got {shown(checks)}")
        return module

    def natural_shape(self, args: dict) -> tuple[int, ...]:
        shape: list[int] = []
        for expr in self.output_shape:
            value = evaluate_shape(expr, args)
            shape.extend(value if isinstance(value, tuple) else (value,))
        return tuple(shape)

    def flat_shape(self, args: dict) -> tuple[int]:
        return (math.prod(self.natural_shape(args)),)

    def check_args(self, args: dict) -> dict:
        """Coerce and validate one input dict against the declared argument kinds: ints become Python
        ints, floats Python floats, arrays contiguous NumPy arrays of the declared dtype."""
        return self._coerce(args, f"{self.slug}: the inputs", lambda name: f"{self.slug}: argument {name}")

    def _coerce(self, args, whole: str, part) -> dict:
        """``check_args`` with the messages' subject given: ``whole`` names the dict, ``part(name)`` one
        of its entries."""
        names = ", ".join(self.args)
        if not isinstance(args, dict):
            raise ProblemError(f"{whole} must be a dict of the arguments {names}, got {shown(args)}")
        missing = [name for name in self.args if name not in args]
        if missing:
            raise ProblemError(f"{part(missing[0])} is missing; the arguments are {names}")
        extra = [name for name in args if name not in self.args and name != kinds.MOVED]
        if extra:
            raise ProblemError(f"{part(extra[0])} is not an argument; the arguments are {names}")
        clean = {}
        for name, kind_name in self.args.items():
            try:
                clean[name] = kinds.kind(kind_name).coerce(args[name])
            except kinds.KindError as exc:
                raise ProblemError(f"{part(name)} {one_line(str(exc))}") from None
        moved = args.get(kinds.MOVED, False)
        if not (isinstance(moved, bool) or isinstance(moved, (list, tuple)) and all(isinstance(p, str) for p in moved)):
            raise ProblemError(f"{whole}: {kinds.MOVED} must be true, false or a list of parameter paths, "
                               f"got {shown(moved)}")
        return kinds.with_moved(clean, moved)

    @property
    def moves_parameters(self) -> bool:
        """Whether the drawn inputs run with the parameters moved away from what ``init`` gives: for every
        problem whose stub asks for Flax modules (a parameter left at ones or zeros shows only there)."""
        return bool(self.parts())

    def drawn_case(self, args: dict) -> dict:
        """A drawn input as it is graded: checked, and with the parameters moved where the problem has any."""
        return kinds.with_moved(self.check_args(args), self.moves_parameters)

    def call_text(self, args: dict) -> str:
        """The call as code, arrays summarised: ``rmsnorm(seed=0, x=<float32 array of shape (2, 3)>, eps=0.01)``."""
        import numpy as np

        written = []
        for name in self.args:
            value = args.get(name)
            if isinstance(value, np.ndarray):
                written.append(f"{name}=<{value.dtype.name} array of shape {value.shape}>")
            else:
                written.append(f"{name}={value!r}")
        moved = kinds.moved(args)
        where = "" if not moved else " with every parameter moved from its initial value" if moved is True \
            else f" with {', '.join(moved)} moved from {'its' if len(moved) == 1 else 'their'} initial value"
        return f"{self.slug}({', '.join(written)}){where}"


def load(root: Path, slug: str) -> Problem:
    """The problem ``slug`` of the checkout ``root``, its problem.toml read and checked."""
    folder = root / "problems" / slug
    if not (folder / "problem.toml").is_file():
        raise UsageError(unknown_problem(root, slug))
    try:
        meta = tomllib.loads((folder / "problem.toml").read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProblemError(f"problems/{slug}/problem.toml is not valid TOML: {one_line(str(exc))}") from None
    return from_metadata(root, slug, meta)


def from_metadata(root: Path, slug: str, meta: dict) -> Problem:
    """The problem that the problem.toml ``meta`` of ``problems/<slug>/`` declares (:mod:`grader.problem.metadata`)."""
    read = metadata.TomlReader(slug, meta)
    problem = Problem(slug=slug, root=root, **metadata.fields(read, slug))
    problem.examples.extend(Example(*example) for example in metadata.examples(read, problem))
    return problem


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _import(path: Path, name: str, root: Path):
    """``load_module``, with whatever the instructor's module raises as a ProblemError."""
    where = shown_path(path, root)
    if not path.is_file():
        raise ProblemError(f"{where} is missing")
    try:
        return load_module(path, name)
    except (Exception, SystemExit) as exc:  # SystemExit too: a module that calls exit() is as broken
        raise ProblemError(f"{where}: importing it raised {describe(exc, path)}") from None


def is_todo(node: ast.AST) -> bool:
    """Whether ``node`` is a function whose body raises NotImplementedError: a stub's TODO."""

    def raises_todo(raised: ast.Raise) -> bool:
        exc = raised.exc.func if isinstance(raised.exc, ast.Call) else raised.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"

    return isinstance(node, ast.FunctionDef) and any(isinstance(n, ast.Raise) and raises_todo(n)
                                                     for n in ast.walk(node))
