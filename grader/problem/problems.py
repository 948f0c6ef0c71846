"""Find the checkout, list its problems and load one: metadata, strategy, stub and reference paths.

Every file an instructor writes is checked where it is read, and every mistake in one is a
ProblemError: one sentence that names the file and the key (or what importing it raised), never a
traceback, so that `grade` can print it and exit 2.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import keyword
import math
import os
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from grader.core import kinds
from grader.core.cut import cut

if TYPE_CHECKING:  # NumPy is imported where it is used: `grade` starts its workers before importing it
    import numpy as np


class ProblemError(Exception):
    """A problem folder is missing or malformed (the instructor's mistake, not the learner's)."""


class UsageError(Exception):
    """The command line names something that does not exist."""


def find_root(start: Path | None = None) -> Path:
    """The checkout that holds ``problems/`` and ``solutions/`` (or a handout's ``problems/`` and
    ``HANDOUT.md``), from ``start`` or any folder inside it."""
    here = (start or Path.cwd()).resolve()
    installed = Path(__file__).resolve().parents[2]  # the checkout the grader is installed from
    for folder in (here, *here.parents, installed):
        if (folder / "problems").is_dir() and ((folder / "solutions").is_dir() or (folder / "HANDOUT.md").is_file()):
            return folder
    raise UsageError(f"no kata checkout (a folder with problems/ and solutions/) at or above {here}")


def find_checkout(command: str) -> Path:
    """:func:`find_root`, for a command that needs the solutions (``command`` names it): not a handout."""
    root = find_root()
    if not (root / "solutions").is_dir():
        raise UsageError(f"this is a handout: {command} needs the full checkout, with solutions/")
    return root


def cache_folder(root: Path) -> Path:
    """Where reference outputs, drawn inputs and compiled programs are kept (GRADE_CACHE_DIR overrides)."""
    return Path(os.environ.get("GRADE_CACHE_DIR") or root / ".grade" / "cache")


def hidden_from_learners(root: Path) -> tuple[str, ...]:
    """What learner code must not read, where it is confined: what gives the answer away (the solutions and
    the checkout's history, the reference's outputs kept in the cache, a handout's recorded answers), and
    what the command that started this one names (a class's folders and gradebook: see
    :mod:`grader.core.submission`)."""
    from grader.core.submission import hidden_by_environment

    # The checkout the grader itself is installed from may be another one (an editable install, an
    # instructor's second copy): its solutions give the answers away as well.
    installed = Path(__file__).resolve().parents[2]
    checkouts = dict.fromkeys([root, *([installed] if (installed / "solutions").is_dir() else [])])
    return (*(str(c / name) for c in checkouts for name in ("solutions", ".git")), str(cache_folder(root)),
            *map(str, sorted(root.glob("problems/*/recorded.npz"))), *hidden_by_environment())


def learner_view(root: Path, slug: str, graded: Path) -> tuple[str, ...]:
    """The folders learner code sees beside the interpreter and the grader, where it is confined: the graded
    problem's own folder and the graded file's. Not the other problems' (a later kata gives an earlier
    one's answer: mini T5's stub holds an RMSNorm)."""
    return str(root / "problems" / slug), str(Path(graded).resolve().parent)


SECRET_FILE = "SECRET"  # solutions/SECRET: what the inputs only the instructor's verdicts use are drawn from
SECRET_VARIABLE = "GRADE_SECRET_INPUTS"  # "1" in the environment of the gradings of `grade batch` and Gradescope


def class_grading() -> bool:
    """Whether `grade batch` or the Gradescope autograder started this command: a class's submissions, each
    graded once (no compile cache kept for a file that is never graded again), on the secret inputs too."""
    return os.environ.get(SECRET_VARIABLE) == "1"


def secret_seed(root: Path) -> int | None:
    """The seed of the inputs drawn, beside the public ones, for the instructor's verdicts: where `grade
    batch` or the Gradescope autograder started this command, from ``solutions/SECRET`` (hidden from learner
    code with the rest of solutions/). Nobody can compute the outputs on them in advance from a handout or
    from the public inputs. None elsewhere: a learner's own runs and a handout grade on the public inputs."""
    if not class_grading():
        return None
    try:
        secret = (root / "solutions" / SECRET_FILE).read_bytes().strip()
    except OSError:
        return None
    return int.from_bytes(hashlib.sha256(secret).digest()[:8], "little") if secret else None


def ensure_secret(root: Path) -> Path:
    """``solutions/SECRET``, made with 32 random bytes where the checkout has none (`grade batch` and `grade
    gradescope` call it); never committed (.gitignore)."""
    import secrets

    path = root / "solutions" / SECRET_FILE
    if not path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            return path  # made meanwhile by another command
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    return path


def graded_file(path: Path) -> Path:
    """The file to grade, ``path`` with the links of the folders on its way resolved; a UsageError where
    ``path`` itself is a symbolic link (as `grade batch` refuses one: a link could point the grader, maybe
    root, at a file its owner could not read, and the report would show its lines) or cannot be resolved."""
    if os.path.islink(path):
        raise UsageError(f"{path} is a symbolic link: give the file itself, not a link to one")
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: Python before 3.13 on a loop
        raise UsageError(f"{path} cannot be read: {exc}") from None


def slugs(root: Path) -> list[str]:
    """Every problem, in the learning order: by the ``order`` of its problem.toml, then by name (a problem
    without one, or whose problem.toml does not read, comes last)."""
    found = [p.name for p in (root / "problems").iterdir() if (p / "problem.toml").is_file()]
    return sorted(found, key=lambda slug: (_order(root, slug), slug))


def _order(root: Path, slug: str) -> float:
    try:
        order = tomllib.loads((root / "problems" / slug / "problem.toml").read_text()).get("order")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return math.inf
    return order if _number(order) else math.inf


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
                    raise ProblemError(f"{_shown_path(self.solution_folder / 'pitfalls.toml', self.root)}: pitfall "
                                       f"{name!r} is also the file {_shown_path(found[name], self.root)}; keep one")
                found[name] = path
        return dict(sorted(found.items()))

    def strategy(self):
        """The Hypothesis strategy that ``strategies.py``'s ``inputs()`` returns."""
        from hypothesis.strategies import SearchStrategy

        path = self.folder / "strategies.py"
        where = _shown_path(path, self.root)
        inputs = getattr(_import(path, f"strategies_{self.slug}", self.root), "inputs", None)
        if not callable(inputs):
            raise ProblemError(f"{where}: inputs is not defined; it must be a function returning a Hypothesis strategy")
        try:
            strategy = inputs()
        except (Exception, SystemExit) as exc:
            raise ProblemError(f"{where}: inputs() raised {_describe(exc, path)}") from None
        if not isinstance(strategy, SearchStrategy):
            raise ProblemError(f"{where}: inputs() returned {_shown(strategy)}, not a Hypothesis strategy")
        return strategy

    def validate_strategy(self) -> dict:
        """Draw one input from the strategy (its simplest, the same every run) and check it against the
        arguments; returns it, checked. Composite strategies run the instructor's code only when drawn,
        so this is where a strategy that raises or draws a wrong value shows."""
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis.errors import Unsatisfiable

        strategy = self.strategy()
        path = self.folder / "strategies.py"
        where = _shown_path(path, self.root)
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
            raise ProblemError(f"{where}: drawing from inputs() raised {_describe(exc, path)}") from None
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
                raise ProblemError(f"{_shown_path(path, self.root)}: {hook} must be a function")
        return module

    def _properties(self):
        path = self.folder / "properties.py"
        if not path.is_file():
            return None
        module = _import(path, f"properties_{self.slug}", self.root)
        if not hasattr(module, "PROPERTIES"):
            raise ProblemError(f"{_shown_path(path, self.root)}: PROPERTIES is not defined; it must be a list of "
                               "functions (args, output) -> a sentence or None")
        checks = module.PROPERTIES
        if not isinstance(checks, (list, tuple)) or not all(callable(c) for c in checks):
            raise ProblemError(f"{_shown_path(path, self.root)}: PROPERTIES must be a list of functions "
                               f"(args, output) -> a sentence or None, got {_shown(checks)}")
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
            raise ProblemError(f"{whole} must be a dict of the arguments {names}, got {_shown(args)}")
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
                raise ProblemError(f"{part(name)} {_one_line(str(exc))}") from None
        moved = args.get(kinds.MOVED, False)
        if not (isinstance(moved, bool) or isinstance(moved, (list, tuple)) and all(isinstance(p, str) for p in moved)):
            raise ProblemError(f"{whole}: {kinds.MOVED} must be true, false or a list of parameter paths, "
                               f"got {_shown(moved)}")
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

        shown = []
        for name in self.args:
            value = args.get(name)
            if isinstance(value, np.ndarray):
                shown.append(f"{name}=<{value.dtype.name} array of shape {value.shape}>")
            else:
                shown.append(f"{name}={value!r}")
        moved = kinds.moved(args)
        where = "" if not moved else " with every parameter moved from its initial value" if moved is True \
            else f" with {', '.join(moved)} moved from {'its' if len(moved) == 1 else 'their'} initial value"
        return f"{self.slug}({', '.join(shown)}){where}"


PITFALL_KEYS = {"id", "doc", "message", "replace", "diagnosis", "stage"}
# Where a known mistake may show besides the values (``STAGE`` of a variant module, ``stage`` in
# pitfalls.toml): a stage of the comparison (grader.core.compare) before the values. A mistake is named only
# where a learner's output fails in its values or at that stage; `grade check` flags a variant that fails
# at another (a replacement that broke the code).
STAGES = ("values", "finite", "dtype", "shape")


def declared_pitfalls(problem: Problem) -> dict[str, Path]:
    """The known-wrong variants declared in ``solutions/<slug>/pitfalls.toml``, each the reference's source
    with its replacements applied, written to ``<cache>/variants/<checkout>/<slug>/<id>.py``: name -> that path.

    Every ``old`` must occur exactly once in the source as the replacements before it left it, so that a
    change to the reference cannot silently leave a variant identical to it, or change it in two places."""
    path = problem.solution_folder / "pitfalls.toml"
    if not path.is_file():
        return {}
    where = _shown_path(path, problem.root)
    try:
        entries = tomllib.loads(path.read_text()).get("pitfall", [])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProblemError(f"{where}: {_one_line(str(exc))}") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ProblemError(f"{where}: pitfall must be a list of [[pitfall]] tables")
    reference = problem.reference.read_text()
    # One folder per checkout: checkouts that share a cache (GRADE_CACHE_DIR) may differ in their variants.
    checkout = hashlib.sha256(str(problem.solution_folder.resolve()).encode()).hexdigest()[:12]
    out = cache_folder(problem.root) / "variants" / checkout / problem.slug
    written = {}
    for i, entry in enumerate(entries):
        key = f"{where}: pitfall[{i}]"
        unknown = sorted(set(entry) - PITFALL_KEYS)
        if unknown:
            raise ProblemError(f"{key}.{unknown[0]} is not a key of a pitfall; the keys are {', '.join(sorted(PITFALL_KEYS))}")
        name = entry.get("id")
        if not (isinstance(name, str) and name.isidentifier() and name.islower()):
            raise ProblemError(f"{key}.id must be a lower-case Python name such as wrong_sign, got {_shown(name)}")
        key = f"{where}: pitfall {name!r}"
        if name in written:
            raise ProblemError(f"{key} is declared twice")
        for field_name in ("doc", "message"):
            if not (isinstance(entry.get(field_name), str) and entry[field_name].strip()):
                raise ProblemError(f"{key}: {field_name} must be a non-empty string")
        stage = entry.get("stage", "values")
        if stage not in STAGES:
            raise ProblemError(f"{key}: stage must be one of {', '.join(STAGES)}, got {_shown(stage)}")
        diagnosis = entry.get("diagnosis")
        if diagnosis is not None and not isinstance(diagnosis, str):
            raise ProblemError(f"{key}: diagnosis must be a string naming a relation of grader/explain/relations.py")
        replace = entry.get("replace")
        if not (isinstance(replace, list) and replace and all(
                isinstance(r, dict) and set(r) == {"old", "new"} and isinstance(r["old"], str) and r["old"]
                and isinstance(r["new"], str) for r in replace)):
            raise ProblemError(f"{key}: replace must be a list of one or more {{ old = \"...\", new = \"...\" }} tables")
        source = reference
        for j, r in enumerate(replace):
            count = source.count(r["old"])
            if count != 1:
                raise ProblemError(f"{key}: replace[{j}].old occurs {count} times in "
                                   f"{_shown_path(problem.reference, problem.root)}"
                                   + (" (after the replacements before it)" if j else "") + ", not once: "
                                   + _shown(r["old"]))
            source = source.replace(r["old"], r["new"])
        constants = f"\n\nMESSAGE = {entry['message'].strip()!r}\n"
        if diagnosis is not None:
            constants += f"DIAGNOSIS = {diagnosis!r}\n"
        if stage != "values":
            constants += f"STAGE = {stage!r}\n"
        header = (f"# Generated by the grader from {where}, pitfall {name!r}: {entry['doc'].strip()}\n"
                  "# The reference with that entry's replacements applied. Edit the TOML, not this file.\n")
        written[name] = _write_if_changed(out / f"{name}.py", header + source.rstrip("\n") + constants)
    return written


def _write_if_changed(path: Path, text: str) -> Path:
    """Writes ``text`` to ``path`` (atomically) unless it already holds it."""
    from grader.core.files import write_text  # NumPy with it: `grade` imports that after starting its workers

    try:
        if path.read_text() == text:
            return path
    except (OSError, UnicodeDecodeError):
        pass
    write_text(path, text)
    return path


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _import(path: Path, name: str, root: Path):
    """``load_module``, with whatever the instructor's module raises as a ProblemError."""
    where = _shown_path(path, root)
    if not path.is_file():
        raise ProblemError(f"{where} is missing")
    try:
        return load_module(path, name)
    except (Exception, SystemExit) as exc:  # SystemExit too: a module that calls exit() is as broken
        raise ProblemError(f"{where}: importing it raised {_describe(exc, path)}") from None


def _describe(exc: BaseException, path: Path | None = None) -> str:
    """``ValueError at line 7: the message's first line``, the line being the last one in ``path``
    the exception passed through (a SyntaxError's message names its own line)."""
    line = ""
    if path is not None and not isinstance(exc, SyntaxError):
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        line = f" at line {lines[-1]}" if lines else ""
    text = _one_line(str(exc))
    return f"{type(exc).__name__}{line}: {text}" if text else f"{type(exc).__name__}{line}"


def _one_line(text: str, limit: int = 200) -> str:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return cut(first, limit)


def _shown(value) -> str:
    return _one_line(repr(value), 60)


def _shown_path(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def unknown_problem(root: Path, name: str) -> str:
    """The sentence that says ``name`` is no problem of this checkout, with the one it may be a misspelling of."""
    import difflib

    known = slugs(root)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    guess = f"; did you mean {close[0]}?" if close else ""
    listing = f"the problems are: {', '.join(known)}" if known else "this checkout has no problems"
    return f"no problem named {name!r}{guess} ({listing})"


def load(root: Path, slug: str) -> Problem:
    folder = root / "problems" / slug
    if not (folder / "problem.toml").is_file():
        raise UsageError(unknown_problem(root, slug))
    try:
        meta = tomllib.loads((folder / "problem.toml").read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProblemError(f"problems/{slug}/problem.toml is not valid TOML: {_one_line(str(exc))}") from None
    return from_metadata(root, slug, meta)


# Every key problem.toml may hold. Unknown keys are errors: a misspelt optional key (`call_second`)
# would otherwise fall back to its default without a word.
TABLES = {
    "output": {"dtype", "shape", "axes"},
    "tolerance": {"exact", "rtol", "atol"},
    "limits": {"call_seconds", "problem_seconds", "memory_mib"},
    "hypothesis": {"max_examples"},
    "teaches": {"what", "calls", "avoids"},
}
TOP_KEYS = {"title", "entry", "order", "args", "examples", "positions", *TABLES}
EXAMPLE_KEYS = {"name", "args", "expected"}
_MISSING = object()


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _output_dtype(value) -> bool:
    """One of the dtypes arrays may have that NumPy knows as a float or an int."""
    import numpy as np

    if not isinstance(value, str) or value not in kinds.ARRAY_DTYPES:
        return False
    try:
        return np.dtype(value).kind in "fiu"
    except TypeError:
        return False


def is_todo(node: ast.AST) -> bool:
    """Whether ``node`` is a function whose body raises NotImplementedError: a stub's TODO."""

    def raises_todo(raised: ast.Raise) -> bool:
        exc = raised.exc.func if isinstance(raised.exc, ast.Call) else raised.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"

    return isinstance(node, ast.FunctionDef) and any(isinstance(n, ast.Raise) and raises_todo(n)
                                                     for n in ast.walk(node))


class _TomlReader:
    """Reads one problem.toml's values, each checked, with errors that name the key and what it must be."""

    def __init__(self, slug: str, meta: dict):
        self.where, self.meta = f"problems/{slug}/problem.toml", meta

    def error(self, key: str, text: str) -> ProblemError:
        return ProblemError(f"{self.where}: {key} {text}")

    def known(self, table: dict, allowed: set, prefix: str, what: str) -> None:
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.error(prefix + unknown[0],
                             f"is not a key problem.toml knows; {what} are: {', '.join(sorted(allowed))}")

    def get(self, table: dict, key: str, prefix: str, ok, wanted: str, default=_MISSING, label: str | None = None):
        label = label or prefix + key
        if key not in table:
            if default is _MISSING:
                raise self.error(label, "is missing")
            return default
        if not ok(table[key]):
            raise self.error(label, f"must be {wanted}, got {_shown(table[key])}")
        return table[key]

    def table(self, key: str, required: bool = True) -> dict:
        found = self.get(self.meta, key, "", lambda v: isinstance(v, dict), "a table", _MISSING if required else {},
                         label=f"[{key}]")
        self.known(found, TABLES[key], f"{key}.", f"the keys of [{key}]")
        return found


def from_metadata(root: Path, slug: str, meta: dict) -> Problem:
    read = _TomlReader(slug, meta)
    read.known(meta, TOP_KEYS, "", "the top-level keys and tables")
    title = read.get(meta, "title", "", lambda v: isinstance(v, str) and v.strip(), "a non-empty string")
    entry = read.get(meta, "entry", "", lambda v: isinstance(v, str), "a string")
    read.get(meta, "order", "", _number, "a number (the problem's place in the learning order)", 0)
    if entry != slug:
        raise read.error("entry", f"is {entry!r}; it must equal the folder name {slug!r}")
    args = read.get(meta, "args", "", lambda v: isinstance(v, dict), "a table of argument names and kinds",
                    label="[args]")
    for name, kind_name in args.items():
        if not name.isidentifier() or keyword.iskeyword(name):
            raise read.error(f"args.{name}", "is not a Python parameter name")
        try:
            kinds.kind(kind_name)
        except kinds.KindError as exc:
            raise read.error(f"args.{name}", str(exc)) from None
    dtype, shape, axes = _read_output(read, args)
    exact, tol = _read_tolerance(read)
    limits = read.table("limits", required=False)
    seconds = {key: read.get(limits, key, "limits.", lambda v: _number(v) and v > 0, "a positive number of seconds",
                             default)
               for key, default in (("call_seconds", 30), ("problem_seconds", 120))}
    memory_mib = read.get(limits, "memory_mib", "limits.", _positive_int, "a positive whole number of MiB", 3072)
    max_examples = read.get(read.table("hypothesis", required=False), "max_examples", "hypothesis.", _positive_int,
                            "a positive whole number", 25)
    positions = read.get(meta, "positions", "", lambda v: isinstance(v, dict), "a table of array arguments and "
                         "the axis of each that holds positions", {})
    for name, axis in positions.items():
        if not str(args.get(name, "")).startswith("array:"):
            raise read.error(f"positions.{name}", "must name an array argument of [args]")
        if not (isinstance(axis, int) and not isinstance(axis, bool) and axis >= 0):
            raise read.error(f"positions.{name}", f"must be an axis, a whole number >= 0, got {_shown(axis)}")
    teaches = read.table("teaches", required=False)
    if teaches:
        read.get(teaches, "what", "teaches.", lambda v: isinstance(v, str) and v.strip(), "a non-empty string")
        read.get(teaches, "calls", "teaches.", _strings, "a list of function names")
        read.get(teaches, "avoids", "teaches.", _strings, "a list of function names", [])
    problem = Problem(
        slug=slug, root=root, title=title, args=dict(args), output_dtype=dtype, output_shape=list(shape),
        exact=exact, rtol=float(tol["rtol"] or 0.0), atol=float(tol["atol"] or 0.0),
        call_seconds=float(seconds["call_seconds"]), problem_seconds=float(seconds["problem_seconds"]),
        memory_mib=memory_mib, max_examples=max_examples, axis_names=axes, positions=dict(positions),
        teaches=dict(teaches),
    )
    examples = read.get(meta, "examples", "", lambda v: isinstance(v, list) and all(isinstance(e, dict) for e in v),
                        "a list of [[examples]] tables", [])
    for i, ex in enumerate(examples):
        problem.examples.append(_read_example(read, problem, f"examples[{i}]", ex))
    return problem


def _read_output(read: _TomlReader, args: dict) -> tuple[str, list[str], list[str] | None]:
    """[output]: its dtype, its shape's expressions (checked against ``args``) and its axes' names."""
    output = read.table("output")
    dtype = read.get(output, "dtype", "output.", _output_dtype, f"one of {', '.join(kinds.ARRAY_DTYPES)}")
    shape = read.get(output, "shape", "output.", _strings,
                     'a list of strings, expressions over the arguments (e.g. ["T", "T"])')
    for expr in shape:
        check_shape_expression(expr, args, read.where)
    axes = read.get(output, "axes", "output.", _strings, "a list of strings, one name per axis of the output", None)
    spliced = any(isinstance(node, ast.Attribute) and node.attr == "shape"
                  for expr in shape for node in ast.walk(ast.parse(expr, mode="eval")))
    if axes is not None and not spliced and len(axes) != len(shape):
        raise read.error("output.axes", f"is {axes}, but output.shape has rank {len(shape)}")
    return dtype, shape, axes


def _read_tolerance(read: _TomlReader) -> tuple[bool, dict]:
    """[tolerance]: exact, or rtol and atol (both)."""
    tolerance = read.table("tolerance")
    exact = read.get(tolerance, "exact", "tolerance.", lambda v: isinstance(v, bool), "true or false", False)
    tol = {key: read.get(tolerance, key, "tolerance.", lambda v: _number(v) and v >= 0, "a number >= 0", None)
           for key in ("rtol", "atol")}
    if exact and any(v is not None for v in tol.values()):
        raise read.error("tolerance.exact", "is true, which leaves no room for rtol and atol; give one or the other")
    for key, value in tol.items():
        if not exact and value is None:
            raise read.error(f"tolerance.{key}", "is missing; [tolerance] needs exact = true, or rtol and atol")
    return exact, tol


def _read_example(read: _TomlReader, problem: Problem, key: str, ex: dict) -> Example:
    """One [[examples]] table: its arguments, and its expected output where it gives one, of the output's shape."""
    import numpy as np

    where = read.where
    read.known(ex, EXAMPLE_KEYS, f"{key}.", "the keys of an example")
    name = read.get(ex, "name", f"{key}.", lambda v: isinstance(v, str) and v.strip(), "a non-empty string")
    ex_args = problem._coerce(read.get(ex, "args", f"{key}.", lambda v: isinstance(v, dict), "a table of the arguments"),
                              f"{where}: {key}.args", lambda arg: f"{where}: {key}.args.{arg}")
    try:
        natural = problem.natural_shape(ex_args)
    except Exception as exc:  # noqa: BLE001  (an expression the arguments do not fit, e.g. `len` of an int)
        raise read.error("output.shape", f"cannot be computed for {key}: {_describe(exc)}") from None
    if not all(isinstance(n, int) and n >= 0 for n in natural):
        raise read.error("output.shape", f"gives {natural} for {key}; every size must be a whole number >= 0")
    if problem.axis_names is not None and len(problem.axis_names) != len(natural):
        raise read.error("output.axes", f"is {problem.axis_names}, but the output of {key} has rank {len(natural)}")
    expected = ex.get("expected")
    if expected is not None:
        try:
            expected = np.asarray(expected)
        except ValueError:  # ragged lists
            raise read.error(f"{key}.expected", "is ragged: its rows differ in length") from None
        if expected.dtype.kind not in "biuf":
            raise read.error(f"{key}.expected", f"must hold numbers, got {_shown(ex['expected'])}")
        if expected.shape != natural:
            raise read.error(f"{key}.expected", f"has shape {expected.shape}, but the output's shape is {natural}")
        expected = expected.astype(problem.output_dtype)
    return Example(name, ex_args, expected)


# Shape expressions: a name, an int, + - * //, len(name), name.shape (spliced), name.size, parentheses.
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


def relative(path) -> str:
    """``path`` relative to the current folder when it lies below it, else as given."""
    rel = os.path.relpath(path)
    return str(path) if rel.startswith("..") else rel
