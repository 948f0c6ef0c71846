"""Grading from a notebook: ``check("rmsnorm", rmsnorm)`` in Jupyter or Colab.

The learner's function is untrusted, so it never runs here. It is written out as a module: its own
source and what it needs from the notebook (import lines for modules and for objects of installed
modules, the source of the functions and classes the notebook defined, plain constants), found by
following the global names of each piece, transitively. That module is graded by the ordinary command
line in a subprocess, `grade <problem> --file F --json`, so the verdict, the isolation and the limits are
exactly the command line's. :func:`check` returns a :class:`Result`, which the notebook displays: a small
HTML report, or the plain text one.

Cells are found as IPython keeps them: ``linecache`` holds each cell's source under the file name its
code objects carry. Nothing here imports NumPy or JAX but the formatting of a report.
"""

from __future__ import annotations

import ast
import builtins
import html
import linecache
import os
import shutil
import symtable
import sys
import tempfile
import textwrap
import types
from dataclasses import dataclass, replace
from pathlib import Path

from grader.problem import problems

GRADE_SECONDS = 3600.0  # for one `grade` command, beyond its own limits on learner code (an hour: a stuck one ends)
COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#bc4c00", "timeout": "#bc4c00",
           "not_started": "#6e7781"}
_LITERAL_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))


class NotWritable(ValueError):
    """Something the learner's code uses cannot be written into the module that is graded (one sentence)."""


# -- the public call ------------------------------------------------------------------------------------

@dataclass(repr=False)
class Result:
    """What grading said: the JSON object of `grade <problem> --json` (:data:`grader.render.report.SCHEMA`).

    A notebook shows it through :meth:`_repr_html_`; ``repr`` is the plain text report."""

    problem: str
    verdict: dict
    file: Path | None = None  # the module graded: yours, or one written for your function
    root: Path | None = None  # the checkout the command ran in: a replay runs from there
    kept: bool = False  # the file was written for your function, and kept because it did not pass

    @property
    def status(self) -> str:
        """``pass``, ``fail``, ``error``, ``timeout`` or ``not_started``."""
        return self.verdict["status"]

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def __repr__(self) -> str:
        return to_text(self)

    def _repr_html_(self) -> str:
        return to_html(self)


def check(problem: str, function=None, *, source: str | os.PathLike | None = None) -> Result:
    """Grade a problem from a notebook, as `grade <problem> --file F` does: ``check("rel_shift", rel_shift)``.

    ``function`` is your entry function, defined in a cell (named as you like: the file graded gives it
    the problem's name); what it uses from the notebook comes along, the classes of a module problem
    too. Where a cell builds things the file cannot hold, give the whole module instead: ``source=`` its
    text, or the path of a file. Prints nothing: the notebook shows the returned :class:`Result`."""
    if not isinstance(problem, str) or not problem.isidentifier():
        return usage(None, f"{problem!r} is not a problem's name (e.g. 'rel_shift')")
    if (function is None) == (source is None):
        given = "neither" if function is None else "both"
        return usage(problem, f"give your function or a module's source, not {given}: check({problem!r}, {problem}) "
                              f"or check({problem!r}, source=...)")
    try:
        root = problems.find_root()
    except problems.UsageError as exc:
        return usage(problem, str(exc))
    path = _source_path(source)
    if path is not None:
        if not path.is_file():
            return usage(problem, f"no file at {path}")
        return _grade(root, problem, path.resolve(), temporary=False)
    try:
        text = source if function is None else module_source(function, problem)
    except NotWritable as exc:
        return usage(problem, str(exc))
    folder = Path(tempfile.mkdtemp(prefix=f"grade-{problem}-"))
    file = folder / f"{problem}.py"
    file.write_text(text, encoding="utf-8")
    return _grade(root, problem, file, temporary=True)


def usage(problem: str | None, message: str) -> Result:
    """A result for a call that graded nothing, as `grade --json` writes a usage error."""
    from grader.render import report

    return Result(problem or "", report.not_graded(problem, "error", message))


def _source_path(source) -> Path | None:
    """``source`` as a path when it names a file (a path object, or one line ending in .py), else None."""
    if isinstance(source, os.PathLike):
        return Path(source)
    if isinstance(source, str) and "\n" not in source and source.strip().endswith(".py"):
        return Path(source.strip())
    return None


def _grade(root: Path, problem: str, file: Path, *, temporary: bool) -> Result:
    """Run `grade <problem> --file F --json` from ``root`` and read its one JSON object; a temporary file is
    removed once it passes, and kept otherwise."""
    from grader.commands import graded

    ran = graded.grade(graded.grade_argv(problem, file), GRADE_SECONDS, cwd=root)
    result = Result(problem, ran.verdict) if ran.verdict is not None else usage(problem, ran.why_not())
    result.root, result.file = root, file
    if temporary and result.passed:
        shutil.rmtree(file.parent, ignore_errors=True)
    result.kept = temporary and not result.passed
    return result


# -- the module written for a function ------------------------------------------------------------------

def module_source(function, entry: str) -> str:
    """The module graded for ``function``: import lines, constants, the source of every function and class
    of the notebook it uses (each after what it needs), and ``function`` bound to the name ``entry``.
    Raises NotWritable, naming what cannot be written out."""
    target = _unwrap(function)
    if _is(function, type):
        raise NotWritable(f"check({entry!r}, ...) takes your entry function (def {entry}(...)), not the class "
                          f"{function.__name__}: for a module problem, pass the {entry} function that uses your "
                          f"classes")
    if not _is(target, types.FunctionType):
        raise NotWritable(f"check({entry!r}, ...) takes your entry function (def {entry}(...)), not a "
                          f"{type(function).__name__}: give a module's text or path as check({entry!r}, source=...)")
    writer = _Writer(entry)
    name = writer.define(function, None, None, target.__globals__)
    if name != entry:
        writer.alias(entry, name, function)
    return writer.text()


class _Writer:
    """The module being written. Each name is bound once, to one object; a name the code needs that stands
    for something else elsewhere, or for something that cannot be written, raises NotWritable."""

    def __init__(self, entry: str):
        self.entry = entry
        self.bound: dict[str, object] = {}
        self.imports: set[str] = set()
        self.constants: list[str] = []
        self.definitions: list[str] = []
        self.aliases: list[str] = []

    def text(self) -> str:
        imports = sorted(self.imports, key=lambda line: (line.startswith("from "), line))
        blocks = ["\n".join(imports), "\n".join(self.constants), *self.definitions, "\n".join(self.aliases)]
        head = f'"""{self.entry}, written out from a notebook by grader.notebook for `grade {self.entry} --file`."""'
        return "\n\n\n".join([head, *(b.strip("\n") for b in blocks if b.strip())]) + "\n"

    def bind(self, name: str, value, user: str) -> bool:
        """Record that ``name`` is ``value``: False when it already was, NotWritable when it is something else."""
        if name not in self.bound:
            self.bound[name] = value
            return True
        if self.bound[name] is value:
            return False
        raise NotWritable(f"the name {name!r}, which your {user or 'code'} uses, would stand for two different "
                          f"objects in the graded file ({_kind(self.bound[name])} and {_kind(value)}): rename one "
                          f"of them")

    def alias(self, name: str, bound_name: str, value) -> None:
        self.bind(name, value, f"function {bound_name}")
        self.aliases.append(f"{name} = {bound_name}")

    def need(self, name: str, namespace: dict, user: str) -> None:
        """Write out what ``name`` is in ``namespace``. A name the notebook lacks (a builtin, or one not
        defined yet) is left to the graded code, which then fails or not as it would in the notebook."""
        if (name.startswith("__") and name.endswith("__")) or name not in namespace:
            return
        value = namespace[name]
        if value is getattr(builtins, name, object()) or not self.bind(name, value, user):
            return
        if _is(value, types.ModuleType):
            self.imports.add(_import_module(name, value, user))
        elif _defined_in(value, namespace):
            bound_name = self.define(value, name, user, namespace)
            if bound_name != name:
                self.aliases.append(f"{name} = {bound_name}")
        elif (literal := _literal(value)) is not None:
            self.constants.append(f"{name} = {literal}")
        elif (line := _import_object(name, value, namespace)) is not None:
            self.imports.add(line)
        else:
            raise NotWritable(
                f"{name!r}, which your {user} uses, is {_kind(value)} built when the notebook ran, and only "
                f"imports, functions, classes and plain constants (numbers, strings, and tuples, lists and "
                f"dicts of them) can be written into the file that is graded: build it inside your code, or "
                f"give the whole module as check({self.entry!r}, source=...)")

    def define(self, value, name: str | None, user: str | None, namespace: dict) -> str:
        """Write the source of a function or class of the notebook after what it needs; returns the name
        its statement binds (``name`` is the one the code used, None for the entry itself). Its global
        names are looked up where its code looks them up (``namespace`` for a class without methods)."""
        text, bound_name = _definition(value, name, user)
        if name is not None and bound_name != name and not self.bind(bound_name, value, user):
            return bound_name  # already written under its own name
        if name is None:
            self.bind(bound_name, value, user)
        namespace = _globals_of(value, namespace)
        what = f"{'class' if _is(value, type) else 'function'} {bound_name}"
        for needed in sorted(_global_names(text) - {bound_name}):
            self.need(needed, namespace, what)
        self.definitions.append(text)
        return bound_name


def _kind(value) -> str:
    if _is(value, types.ModuleType):
        return f"the module {_attr(value, '__name__')}"
    if _is(value, type):
        return f"the class {_attr(value, '__qualname__')}"
    if callable(value) and isinstance(_attr(value, "__name__"), str):
        return f"the function {_attr(value, '__name__')}"
    return f"an object of type {type(value).__name__}"


def _attr(value, name: str, default=None):
    """``value.name`` as ``getattr`` gives it, read without running any code of the notebook's (a global of
    the learner's may define ``__getattr__``, properties, a ``__dict__`` of its own or a metaclass with a
    ``__getattribute__``; ``inspect.getattr_static`` runs the last): through a built-in type's descriptor, or
    from the dictionaries of the object and its classes; ``default`` where only running code would say."""
    dict_of, mro_of = type.__dict__["__dict__"].__get__, type.__dict__["__mro__"].__get__
    kind = type(value)

    def lookup(classes):
        for entry in classes:
            if name in dict_of(entry):
                return dict_of(entry)[name]
        return _MISSING

    found = lookup(mro_of(kind))
    if type(found) in (types.GetSetDescriptorType, types.MemberDescriptorType):  # C code reads them
        try:
            return found.__get__(value, kind)
        except AttributeError:
            return default
    if issubclass(kind, type):
        found = lookup(mro_of(value))
    else:
        holder = next((dict_of(e)["__dict__"] for e in mro_of(kind) if "__dict__" in dict_of(e)), None)
        own = holder.__get__(value, kind) if type(holder) in (types.GetSetDescriptorType,
                                                               types.MemberDescriptorType) else None
        if type(own) is dict and name in own:
            found = own[name]
    if found is _MISSING or type(found).__module__ != "builtins" or type(found) is property:
        return default
    return found


def _is(value, kind: type) -> bool:
    """``isinstance(value, kind)`` by the object's true type (``isinstance`` may read a ``__class__`` property)."""
    return issubclass(type(value), kind)


def _unwrap(value):
    """``inspect.unwrap`` through :func:`_attr`: the function under a decorator's wrappers."""
    for _ in range(100):
        inner = _attr(value, "__wrapped__")
        if inner is None or not callable(inner):
            break
        value = inner
    return value


def _defined_in(value, namespace: dict) -> bool:
    """Whether ``value`` is a function (possibly decorated) or class that the notebook's code defined."""
    if not _is(value, type) and not _is(_unwrap(value), types.FunctionType):
        return False
    return _attr(value, "__module__") == namespace.get("__name__", "__main__")


def _globals_of(value, namespace: dict) -> dict:
    """The namespace a function or class of the notebook looks its global names up in."""
    functions = _methods(value) if _is(value, type) else [_unwrap(value)]
    return functions[0].__globals__ if functions else namespace


def _methods(cls: type) -> list[types.FunctionType]:
    """The functions written in the body of ``cls`` (decorated, wrapped by Flax or not), in its order."""
    found = []
    for attr in list(_attr(cls, "__dict__", {}).values()):
        for candidate in (attr, _attr(attr, "__func__"), _attr(attr, "fget")):
            function = _unwrap(candidate)
            if (_is(function, types.FunctionType) and function.__code__.co_filename != "<string>"
                    and function.__qualname__.startswith(f"{_attr(cls, '__qualname__')}.")):
                found.append(function)
                break
    return found


# -- finding the source of a definition -----------------------------------------------------------------

def _subject(what: str, user: str | None) -> str:
    """``what`` as a sentence names it: where another definition uses it, which one (None: the entry)."""
    return f"{what}, which your {user} uses," if user else f"your {what}"


def _definition(value, name: str | None, user: str | None) -> tuple[str, str]:
    """The source of the statement that defined ``value`` (decorators included, dedented) and the name it
    binds, read from the cell (or file) its code came from."""
    if _is(value, type):
        return _class_definition(value, user)
    function = _unwrap(value)
    what = f"function {name or function.__name__}"
    if "<locals>" in function.__qualname__ or "." in function.__qualname__:
        raise NotWritable(f"{_subject(what, user)} is defined inside another function or class, so it cannot be "
                          f"written out alone: define it at the top level of a cell")
    code = function.__code__
    found = _statement(code.co_filename, code.co_firstlineno, function.__name__, lambda_ok=True)
    if found is None:
        raise NotWritable(f"the source of {_subject(what, user).removeprefix('your ')} is not available (it was "
                          f"not written in a cell or a file): define it in a cell, or give check(source=...)")
    return found


def _class_definition(cls: type, user: str | None) -> tuple[str, str]:
    name, qualified = str(_attr(cls, "__name__")), str(_attr(cls, "__qualname__"))
    what = f"class {name}"
    if "<locals>" in qualified or "." in qualified:
        raise NotWritable(f"{_subject(what, user)} is defined inside a function or another class: define it at "
                          f"the top level of a cell")
    for method in _methods(cls):  # a method's code says which cell holds the class
        code = method.__code__
        found = _statement(code.co_filename, code.co_firstlineno, name, classes=True)
        if found is not None:
            return found
    runs: dict[str, int] = {}  # without a method, each cell's definition, and when IPython last ran it
    for filename, number in _cells():
        if (found := _statement(filename, None, name, classes=True)) is not None:
            runs[found[0]] = max(runs.get(found[0], -1), -1 if number is None else number)
    if len(runs) == 1 or (runs and min(runs.values()) >= 0):
        return max(runs, key=runs.get), name
    where = "is in no cell" if not runs else "is in more than one cell, and it has no method to tell which one ran"
    raise NotWritable(f"the source of the {_subject(what, user).removeprefix('your ')} {where}: give the whole "
                      f"module as check(source=...)")


def _cells() -> list[tuple[str, int | None]]:
    """Every notebook cell in ``linecache`` (IPython keeps them there with no time stamp), with its execution
    number where IPython has it."""
    numbers = {}
    if "IPython" in sys.modules:
        shell = sys.modules["IPython"].get_ipython()
        numbers = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}
    return [(filename, numbers.get(filename)) for filename, entry in list(linecache.cache.items())
            if len(entry) == 4 and entry[1] is None]


def _statement(filename: str, lineno: int | None, name: str, *, classes: bool = False,
               lambda_ok: bool = False) -> tuple[str, str] | None:
    """In the cell or file ``filename``, the outermost statement (not inside a function or class) that
    defines ``name`` and covers line ``lineno`` (any line, where None); its dedented source and the name it
    binds. For a lambda, an assignment of it to one name."""
    lines = linecache.getlines(filename)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    kinds = (ast.ClassDef,) if classes else (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in _outer_statements(tree.body):
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        if lineno is not None and not start <= lineno <= node.end_lineno:
            continue
        if isinstance(node, kinds) and node.name == name:
            return textwrap.dedent("".join(lines[start - 1:node.end_lineno])), node.name
        if (lambda_ok and name == "<lambda>" and isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda)
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            return textwrap.dedent("".join(lines[start - 1:node.end_lineno])), node.targets[0].id
    return None


def _outer_statements(body: list[ast.stmt]):
    """Statements of a module, also those inside if/for/while/with/try blocks, but not inside a function or
    class body."""
    for node in body:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for key in ("body", "orelse", "finalbody"):
                yield from _outer_statements(getattr(node, key, []))
            for handler in getattr(node, "handlers", []):
                yield from _outer_statements(handler.body)


def _global_names(text: str) -> set[str]:
    """The global names a statement's code reads (in its body, decorators, defaults, annotations, base
    classes; not the attributes or locals), as the compiler resolves them."""
    names = set()

    def walk(table: symtable.SymbolTable) -> None:
        for sym in table.get_symbols():
            if sym.is_global() and (sym.is_referenced() or sym.is_declared_global()):
                names.add(sym.get_name())
        for child in table.get_children():
            walk(child)

    walk(symtable.symtable(text, "<cell>", "exec"))
    return names


# -- imports and constants ------------------------------------------------------------------------------

def _importable(module) -> bool:
    """Whether a fresh interpreter gets this very module back from ``import <its name>``."""
    name = _attr(module, "__name__")
    return _is(module, types.ModuleType) and isinstance(name, str) and name != "__main__" and sys.modules.get(name) is module


def _import_module(name: str, module: types.ModuleType, user: str) -> str:
    if not _importable(module):
        raise NotWritable(f"{name!r}, which your {user} uses, is a module made when the notebook ran, not one "
                          f"that can be imported: import it by name, or give check(source=...)")
    module_name = _attr(module, "__name__")
    return f"import {module_name}" if name == module_name else f"import {module_name} as {name}"


def _import_object(name: str, value, namespace: dict) -> str | None:
    """``from <module> import <attribute> [as name]`` for an object an importable module holds: its own
    ``__module__`` first, then the modules the notebook imported; None when none holds it."""
    named = [name, _attr(value, "__name__"), _attr(value, "__qualname__")]
    attributes = [a for a in dict.fromkeys(named) if isinstance(a, str) and a.isidentifier()]
    owner = _attr(value, "__module__")
    imported = [m for m in namespace.values() if _importable(m)]
    modules = [m for m in [sys.modules.get(owner) if isinstance(owner, str) else None, *imported] if _importable(m)]
    for module in modules:
        for attribute in attributes:
            if _attr(module, "__dict__", {}).get(attribute, _MISSING) is value:
                return _from_line(module, attribute, name)
    for module in imported:
        for attribute, held in list(_attr(module, "__dict__", {}).items()):
            if held is value and attribute.isidentifier() and not attribute.startswith("_"):
                return _from_line(module, attribute, name)
    return None


_MISSING = object()


def _from_line(module: types.ModuleType, attribute: str, name: str) -> str:
    return f"from {_attr(module, '__name__')} import {attribute}" + (f" as {name}" if attribute != name else "")


def _literal(value, depth: int = 0) -> str | None:
    """Python source that rebuilds ``value`` when it is a plain constant (numbers, strings, bytes, None, and
    tuples, lists, sets and dicts of them), else None."""
    if depth > 20:
        return None
    kind = type(value)
    if kind is float and value != value or kind is float and value in (float("inf"), float("-inf")):
        return f'float("{value}")'
    if kind in _LITERAL_TYPES:
        return repr(value)
    items = [_literal(v, depth + 1) for v in value] if kind in (tuple, list, set, frozenset) else None
    if kind is dict:
        items = [f"{k}: {v}" if k is not None and v is not None else None
                 for k, v in ((_literal(k, depth + 1), _literal(v, depth + 1)) for k, v in value.items())]
    if items is None or None in items:
        return None
    inner = ", ".join(items)
    return {tuple: f"({inner}{',' if len(items) == 1 else ''})", list: f"[{inner}]", dict: f"{{{inner}}}",
            set: f"{{{inner}}}" if items else "set()", frozenset: f"frozenset({{{inner}}})"}[kind]


# -- the report -----------------------------------------------------------------------------------------


def _medium(result: Result):
    """The notebook's text report: the command line's, with the replay run from the checkout and the
    kept file named."""
    from grader.render import text

    kept = (f"Your code as graded is kept in {result.file}",) if result.kept else ()
    return text.Medium(replay_from=str(result.root) if result.root else "", tail=kept)


def to_text(result: Result) -> str:
    """The text report of `grade` (:func:`grader.render.text.render`), from the verdict's object."""
    from grader.render import text

    return text.render(result.verdict, _medium(result))


def to_html(result: Result) -> str:
    """The text report as HTML: the verdict word in its colour, then the rest as the text has it."""
    from grader.core.verdict import Status
    from grader.render import text

    _, *rest = text.sections(result.verdict, replace(_medium(result), name_problem=False))
    status = result.verdict["status"]
    word = text.HEADLINES[Status(status)]
    message = text.shown(result.verdict.get("message") or "")
    body = "\n".join(line for section in rest for line in section).strip("\n")
    return (f'<div class="grade-result"><p><b style="color:{COLOURS.get(status, "#6e7781")}">{word}</b> '
            f'<code>{html.escape(result.problem)}</code> &mdash; {html.escape(message)}</p>'
            + (f"<pre>{html.escape(body)}</pre>" if body else "") + "</div>")
