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
import pathlib
import re
import shutil
import symtable
import sys
import tempfile
import textwrap
import tokenize
import types
from dataclasses import dataclass, replace
from pathlib import Path

from grader.problem import problems

GRADE_SECONDS = 3600.0  # for one `grade` command, beyond its own limits on learner code (an hour: a stuck one ends)
COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#bc4c00", "timeout": "#bc4c00",
           "not_started": "#6e7781"}
_LITERAL_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))
_PATHS = (pathlib.PosixPath, pathlib.WindowsPath, pathlib.PurePosixPath, pathlib.PureWindowsPath)  # not subclasses


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


def check(problem: str, function=None, *, source: str | Path | None = None) -> Result:
    """Grade a problem from a notebook, as `grade <problem> --file F` does: ``check("rel_shift", rel_shift)``.

    ``function`` is your entry function, defined in a cell (named as you like: the file graded gives it
    the problem's name); what it uses from the notebook comes along, the classes of a module problem
    too. Where a cell builds things the file cannot hold, give the whole module instead: ``source=`` its
    text, or the path of a file. A notebook (or an interactive session) shows the returned
    :class:`Result`; in a script, ``check`` prints its report too."""
    result = _check(problem, function, source)
    if not getattr(builtins, "__IPYTHON__", False) and not hasattr(sys, "ps1"):  # (IPython sets the first)
        print(to_text(result), flush=True)
    return result


def _check(problem, function, source) -> Result:
    if type(problem) is not str or not problem.isidentifier():  # a str subclass, say, runs its own methods
        shown = repr(problem) if type(problem) is str else f"an object of type {_type_label(type(problem))}"
        return usage(None, f"{shown} is not a problem's name (e.g. 'rel_shift')")
    if source is not None and type(source) is not str and not _one_of(type(source), _PATHS):
        return usage(problem, f"source= takes the module's text or its path (a str or a pathlib path), not an "
                              f"object of type {_type_label(type(source))}")
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
    if _one_of(type(source), _PATHS):
        return Path(source)
    if type(source) is str and "\n" not in source and source.strip().endswith(".py"):
        return Path(source.strip())
    return None


def _grade(root: Path, problem: str, file: Path, *, temporary: bool) -> Result:
    """Run `grade <problem> --file F --json` from ``root`` and read its one JSON object; a temporary file is
    removed once it passes, and kept otherwise."""
    from grader.commands import graded

    ran = graded.grade(graded.grade_argv(problem, file), GRADE_SECONDS, cwd=root)
    result = Result(problem, ran.verdict) if ran.verdict is not None else usage(problem, ran.why_not())
    result.root, result.file = root, file
    result.kept = temporary and not result.passed
    forget_kept(problem, file.parent if result.kept else None, everything=result.passed)
    return result


KEPT_SECONDS = 24 * 3600.0  # a failing check's module is kept this long at most (its replay needs it)


def forget_kept(problem: str, keep: Path | None, everything: bool) -> None:
    """Remove the modules earlier checks of ``problem`` wrote and kept because they did not pass (their
    reports' replays read them): all of them once a check of it passes (``everything``), else those older
    than :data:`KEPT_SECONDS`; never ``keep``. Only this user's folders that hold that one module."""
    import time

    for folder in Path(tempfile.gettempdir()).glob(f"grade-{problem}-*"):
        try:
            info = folder.lstat()
            if (folder == keep or not folder.is_dir() or folder.is_symlink() or info.st_uid != os.getuid()
                    or [p.name for p in folder.iterdir()] != [f"{problem}.py"]):
                continue
            if everything or time.time() - info.st_mtime > KEPT_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


# -- the module written for a function ------------------------------------------------------------------

def module_source(function, entry: str) -> str:
    """The module graded for ``function``: import lines, constants, the source of every function and class
    of the notebook it uses (each after what it needs), and ``function`` bound to the name ``entry``.
    Raises NotWritable, naming what cannot be written out. Nothing of the notebook's runs meanwhile (see
    :func:`_attr`)."""
    target = _unwrap(function)
    if _is(function, type):
        raise NotWritable(f"check({entry!r}, ...) takes your entry function (def {entry}(...)), not the class "
                          f"{_type_label(function)}: for a module problem, pass the {entry} function that uses "
                          f"your classes")
    if type(target) is not types.FunctionType:
        raise NotWritable(f"check({entry!r}, ...) takes your entry function (def {entry}(...)), not a "
                          f"{_type_label(type(function))}: give a module's text or path as "
                          f"check({entry!r}, source=...)")
    writer = _Writer(entry)
    name = writer.define(function, None, None, {})
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
        self.modules = _names(sys.modules)  # read once: every import line looks modules up here
        self.builtins = _names(_attr(builtins, "__dict__"))

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
        """Write out what ``name`` is in ``namespace`` (a copy made by :func:`_names`). A name the notebook
        lacks (a builtin, or one not defined yet) is left to the graded code, which then fails or not as it
        would in the notebook."""
        if (name.startswith("__") and name.endswith("__")) or name not in namespace:
            return
        value = namespace[name]
        if value is self.builtins.get(name, _MISSING) or not self.bind(name, value, user):
            return
        if _is(value, types.ModuleType):
            self.imports.add(self.import_module(name, value, user))
        elif self.defined_in(value, namespace, name, user):
            bound_name = self.define(value, name, user, namespace)
            if bound_name != name:
                self.aliases.append(f"{name} = {bound_name}")
        elif (literal := _literal(value)) is not None:
            self.constants.append(f"{name} = {literal}")
        elif (line := self.import_object(name, value, namespace)) is not None:
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
        names are looked up where its code looks them up (``namespace`` for a class without methods), and
        its defaults are the ones its function objects hold now (:meth:`defaults`)."""
        text, bound_name, start = _definition(value, name, user)
        if name is not None and bound_name != name and not self.bind(bound_name, value, user):
            return bound_name  # already written under its own name
        if name is None:
            self.bind(bound_name, value, user)
        what = f"{'class' if _is(value, type) else 'function'} {bound_name}"
        namespace = _globals_of(value, namespace, _subject(what, user))
        text = self.defaults(value, text, start, bound_name, namespace, user)
        for needed in sorted(_global_names(text) - {bound_name}):
            self.need(needed, namespace, what)
        self.definitions.append(text)
        return bound_name

    def defined_in(self, value, namespace: dict, name: str, user: str) -> bool:
        """Whether ``value`` is a function (possibly decorated) or class that the notebook's code defined: its
        ``__module__`` is the notebook's name. One that is not a plain string is refused, not compared."""
        if not _is(value, type) and type(_unwrap(value)) is not types.FunctionType:
            return False
        module = _module_of(value)
        if module is not None and type(module) is not str:
            raise NotWritable(f"{name!r}, which your {user} uses, carries a __module__ that is {_kind(module)} "
                              f"rather than a string, so where it was defined is not read: leave __module__ as "
                              f"Python sets it, or give the whole module as check({self.entry!r}, source=...)")
        return module is not None and module == _text(namespace.get("__name__", "__main__"))

    # -- defaults

    def defaults(self, value, text: str, start: int | None, bound_name: str, namespace: dict,
                 user: str | None) -> str:
        """``text`` with each default written as the value its function object holds now. A default is
        evaluated when its ``def`` runs, so the source reads a global as it was then (``s=SCALE``, SCALE
        changed since): where the source would not give this very value again, the value is written in its
        place, or NotWritable names the parameter whose value cannot be written."""
        statement = next((n for n in ast.parse(text).body if _binds(n, bound_name)), None)
        if statement is None:  # not found again: _statement found it, so this does not happen
            return text
        if isinstance(statement, ast.ClassDef):  # a method's defaults read names of the class body first
            shadowed = frozenset(key for key, _ in _class_items(value) if type(key) is str)
            pairs = [(method, node, f"method {bound_name}.{method.__name__}")
                     for method in _methods(value) if (node := _method_node(statement, method, start)) is not None]
        else:
            node = statement.value if isinstance(statement, ast.Assign) else statement
            shadowed, pairs = frozenset(), [(_unwrap(value), node, f"function {bound_name}")]
        replaced = []
        for function, node, what in pairs:
            subject = _subject(what, user)
            for parameter, expression, default in _parameter_defaults(function, node.args, subject, self.entry):
                if not _gives_again(expression, default, namespace, shadowed, self.builtins):
                    replaced.append((expression, self.default_text(default, parameter, subject)))
        return _replaced(text, replaced)

    def default_text(self, default, parameter: str, subject: str) -> str:
        """Source that rebuilds a default's value, or NotWritable naming its parameter."""
        if (literal := _literal(default)) is not None or (literal := _numpy_scalar(default, self.modules)) is not None:
            return literal
        raise NotWritable(f"the default of the parameter {parameter!r} of {subject} is {_kind(default)}, made "
                          f"when its def ran, and only a plain constant (a number, a string, None, or a tuple, "
                          f"list or dict of them) or a name still bound to it can be written into the file that "
                          f"is graded: compute it inside the function, or give the whole module as "
                          f"check({self.entry!r}, source=...)")

    # -- imports

    def importable(self, module) -> bool:
        """Whether a fresh interpreter gets this very module back from ``import <its name>``."""
        if not _is(module, types.ModuleType):
            return False
        name = _text(_attr(module, "__name__"))
        return name is not None and name != "__main__" and self.modules.get(name) is module

    def import_module(self, name: str, module: types.ModuleType, user: str) -> str:
        if not self.importable(module):
            raise NotWritable(f"{name!r}, which your {user} uses, is a module made when the notebook ran, not "
                              f"one that can be imported: import it by name, or give check(source=...)")
        module_name = _attr(module, "__name__")
        return f"import {module_name}" if name == module_name else f"import {module_name} as {name}"

    def import_object(self, name: str, value, namespace: dict) -> str | None:
        """``from <module> import <attribute> [as name]`` for an object an importable module holds: its own
        ``__module__`` first, then the modules the notebook imported; None when none holds it."""
        named = [name, _text(_attr(value, "__name__")), _text(_attr(value, "__qualname__"))]
        attributes = [a for a in dict.fromkeys(n for n in named if n is not None) if a.isidentifier()]
        owner = _text(_module_of(value))
        imported = [m for m in namespace.values() if self.importable(m)]
        modules = [m for m in [self.modules.get(owner) if owner is not None else None, *imported]
                   if self.importable(m)]
        for module in modules:
            held = _names(_attr(module, "__dict__"))
            for attribute in attributes:
                if held.get(attribute, _MISSING) is value:
                    return _from_line(module, attribute, name)
        for module in imported:
            for attribute, held in _names(_attr(module, "__dict__")).items():
                if held is value and attribute.isidentifier() and not attribute.startswith("_"):
                    return _from_line(module, attribute, name)
        return None


def _kind(value) -> str:
    if _is(value, types.ModuleType) and (name := _text(_attr(value, "__name__"))) is not None:
        return f"the module {name}"
    if _is(value, type):
        return f"the class {_type_label(value, qualified=True)}"
    if callable(value) and (name := _text(_attr(value, "__name__"))) is not None:
        return f"the function {name}"
    return f"an object of type {_type_label(type(value))}"


# -- reading the notebook's objects without running their code ------------------------------------------
#
# check() runs in the notebook's own process, so no code of the learner's may run while it reads their
# objects: no __eq__, __hash__, __str__, __repr__ or __format__, no __getattr__, property or other descriptor,
# no hook of a metaclass. Attributes are read through the C descriptors of built-in types, or from the
# dictionaries of the object and its classes; a dictionary is listed, never looked up in (a key of the
# learner's may hash as a name does, and a lookup then runs its __eq__); types are compared by identity
# (`in` compares with ==, which a metaclass may define); and a value is used only where its type is exactly
# the one expected (a str subclass has its own __eq__, __hash__ and __format__). A function's and a code
# object's own attributes are read directly: their types are built in and cannot be subclassed.

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class a class statement (or an extension module) made
_class_dict = type.__dict__["__dict__"].__get__  # a mappingproxy of the class's own dict
_class_mro = type.__dict__["__mro__"].__get__
_class_flags = type.__dict__["__flags__"].__get__
_class_name = type.__dict__["__name__"].__get__
_class_qualname = type.__dict__["__qualname__"].__get__
_builtin_module = type.__dict__["__module__"].__get__  # for a built-in type: read from its C name
_C_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType)
_MISSING = object()


def _attr(value, name: str, default=None):
    """``value.name`` as ``getattr`` gives it, read without running any code of the notebook's (a global of
    the learner's may define ``__getattr__``, properties, a ``__dict__`` of its own or a metaclass with a
    ``__getattribute__``; ``inspect.getattr_static`` runs the last): through a built-in type's descriptor
    (whose C code, for the names read here, reads a slot), or from the dictionaries of the object and its
    classes; ``default`` where only running code would say, or where the value is of a class of the
    learner's. The value may still be a built-in container of anything: check its type before use."""
    kind = type(value)
    found = _in_classes(_class_mro(kind), name)
    if _one_of(type(found), _C_DESCRIPTORS):
        if found.__name__ != name:  # a built-in type's descriptor moved under another name, e.g. __doc__'s
            return default
        try:
            return found.__get__(value, kind)
        except (AttributeError, TypeError):  # unset, or a descriptor of another type
            return default
    if _subclass(kind, type):
        found = _in_classes(_class_mro(value), name)
    else:
        holder = _in_classes(_class_mro(kind), "__dict__")
        if _one_of(type(holder), _C_DESCRIPTORS) and holder.__name__ == "__dict__":
            try:
                found = _entry(holder.__get__(value, kind), name, found)
            except (AttributeError, TypeError):
                pass
    if found is _MISSING or _class_flags(type(found)) & _HEAPTYPE or type(found) is property:
        return default
    return found


def _in_classes(classes, name: str):
    """The first entry ``name`` in the dicts of ``classes`` (an MRO), or _MISSING."""
    for cls in classes or ():
        if (found := _first(_class_items(cls), name)) is not _MISSING:
            return found
    return _MISSING


def _class_items(cls: type) -> list:
    """The items of a class's own dict (a real dict under its mappingproxy: listing it calls nothing)."""
    return list(_class_dict(cls).items())


def _entry(mapping, name: str, default=_MISSING):
    """``mapping[name]`` for exactly a dict, found by listing it; ``default`` for anything else."""
    return _first(mapping.items(), name, default) if type(mapping) is dict else default


def _first(items, name: str, default=_MISSING):
    """The value of the first item whose key is exactly the string ``name`` (a dict's items, listed: nothing
    else runs meanwhile, so it cannot change)."""
    for key, held in items:
        if type(key) is str and key == name:
            return held
    return default


def _names(mapping) -> dict:
    """A copy of a dict's entries whose keys are exactly strings, made without hashing or comparing
    anything of the learner's: names are then looked up in the copy. Empty for what is not exactly a dict."""
    if type(mapping) is not dict:
        return {}
    return {key: held for key, held in list(mapping.items()) if type(key) is str}


def _text(value) -> str | None:
    """``value`` where it is exactly a str, else None."""
    return value if type(value) is str else None


def _type_label(kind: type, *, qualified: bool = False) -> str:
    """A class's name for a sentence, as the class holds it (not as a metaclass would say)."""
    return _text((_class_qualname if qualified else _class_name)(kind)) or "a class whose name is not a string"


def _module_of(value):
    """``value.__module__``, read without running anything: a class's from its own dict (a built-in type's
    from its C name), anything else's by :func:`_attr`. Any object, or None: check its type."""
    if _is(value, type):
        if _class_flags(value) & _HEAPTYPE:
            return _first(_class_items(value), "__module__", None)
        return _builtin_module(value)
    return _attr(value, "__module__")


def _one_of(kind: type, kinds: tuple) -> bool:
    """``kind in kinds`` by identity."""
    return any(kind is k for k in kinds)


def _subclass(kind: type, base: type) -> bool:
    """``issubclass(kind, base)`` read from ``kind``'s own MRO."""
    return any(cls is base for cls in _class_mro(kind) or ())


def _is(value, kind: type) -> bool:
    """``isinstance(value, kind)`` by the object's true type (``isinstance`` may read a ``__class__`` property)."""
    return _subclass(type(value), kind)


def _unwrap(value):
    """``inspect.unwrap`` through :func:`_attr`: the function under a decorator's wrappers."""
    for _ in range(100):
        inner = _attr(value, "__wrapped__")
        if inner is None or not callable(inner):
            break
        value = inner
    return value


def _globals_of(value, namespace: dict, subject: str) -> dict:
    """The namespace a function or class of the notebook looks its global names up in, as a copy by
    :func:`_names`."""
    functions = _methods(value) if _is(value, type) else [_unwrap(value)]
    if not functions:
        return namespace
    found = functions[0].__globals__
    if type(found) is not dict:
        raise NotWritable(f"{subject} runs with globals that are {_kind(found)}, not the notebook's plain "
                          f"dict: give the whole module as check(source=...)")
    return _names(found)


def _methods(cls: type) -> list[types.FunctionType]:
    """The functions written in the body of ``cls`` (decorated, wrapped by Flax or not), in its order."""
    found, owner = [], _text(_class_qualname(cls))
    if owner is None:
        return found
    for _, attr in _class_items(cls):
        for candidate in (attr, _attr(attr, "__func__"), _attr(attr, "fget")):
            function = _unwrap(candidate)
            if type(function) is not types.FunctionType:
                continue
            filename, qualified = function.__code__.co_filename, _text(function.__qualname__)
            if (type(filename) is str and filename != "<string>" and _text(function.__name__) is not None
                    and qualified is not None and qualified.startswith(f"{owner}.")):
                found.append(function)
                break
    return found


# -- defaults, as the function holds them ---------------------------------------------------------------

def _parameter_defaults(function: types.FunctionType, arguments: ast.arguments, subject: str, entry: str):
    """(parameter, its default's expression in the source, the default's value now) for each default of
    ``function``, whose ``def`` (or lambda) has ``arguments``."""
    positional = [*arguments.posonlyargs, *arguments.args][len(arguments.posonlyargs) + len(arguments.args)
                                                         - len(arguments.defaults):]
    values, keywords = function.__defaults__, function.__kwdefaults__  # None, or a tuple and a dict (or subclasses)
    values, keywords = () if values is None else values, {} if keywords is None else keywords
    keyword = [(a, e) for a, e in zip(arguments.kwonlyargs, arguments.kw_defaults) if e is not None]
    kwargs = _names(keywords)
    if (type(values) is not tuple or type(keywords) is not dict or len(values) != len(positional)
            or len(kwargs) != len(keywords) or sorted(kwargs) != sorted(a.arg for a, _ in keyword)):
        raise NotWritable(f"the defaults of {subject} are not those its def gives (its __defaults__ or "
                          f"__kwdefaults__ were set since): define it again in a cell, or give the whole module "
                          f"as check({entry!r}, source=...)")
    yield from ((a.arg, e, v) for a, e, v in zip(positional, arguments.defaults, values))
    yield from ((a.arg, e, kwargs[a.arg]) for a, e in keyword)


def _gives_again(expression: ast.expr, value, namespace: dict, shadowed: frozenset, builtin: dict) -> bool:
    """Whether ``expression``, evaluated in the module written, gives ``value`` again, as read without
    running it: a literal that writes as the value does, or a name (or an attribute of a module, or of a
    class no cell defined) that is bound to this very object now. A name the class body binds
    (``shadowed``) is not read, nor an attribute of a class of the notebook: the file runs its source again,
    and its attributes may have been set since."""
    try:
        held = ast.literal_eval(expression)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    else:
        return (literal := _literal(held)) is not None and literal == _literal(value)
    chain = []
    while isinstance(expression, ast.Attribute):
        chain.append(expression.attr)
        expression = expression.value
    if not isinstance(expression, ast.Name) or expression.id in shadowed:
        return False
    held, here = namespace.get(expression.id, builtin.get(expression.id, _MISSING)), _text(namespace.get("__name__"))
    for attribute in reversed(chain):  # entries as the dicts hold them, of any type: only compared, by identity
        if _is(held, types.ModuleType):
            held = _entry(_attr(held, "__dict__"), attribute)
        elif _is(held, type) and (module := _text(_module_of(held))) is not None and module != (here or "__main__"):
            held = _in_classes(_class_mro(held), attribute)
        else:
            return False
    return held is value


def _method_node(statement: ast.ClassDef, method: types.FunctionType, start: int | None) -> ast.FunctionDef | None:
    """The ``def`` of ``method`` in the class statement that begins on line ``start`` of its cell."""
    if start is None:
        return None
    line = method.__code__.co_firstlineno - start + 1  # the def's first decorator, where it has one
    for node in _outer_statements(statement.body):
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == method.__name__
                and min([node.lineno, *(d.lineno for d in node.decorator_list)]) == line):
            return node
    return None


def _binds(node: ast.stmt, name: str) -> bool:
    """Whether ``node`` is the ``def`` or ``class`` statement of ``name``, or the assignment of a lambda to it."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    return (isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name)


def _replaced(text: str, replacements: list[tuple[ast.expr, str]]) -> str:
    """``text`` with each expression's span replaced by its new source, the last first."""
    lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", text)  # the lines as the parser numbers them
    for node, new in sorted(replacements, key=lambda r: (r[0].lineno, r[0].col_offset), reverse=True):
        head = lines[node.lineno - 1].encode()[:node.col_offset].decode()  # offsets count UTF-8 bytes
        tail = lines[node.end_lineno - 1].encode()[node.end_col_offset:].decode()
        lines[node.lineno - 1:node.end_lineno] = [head + new + tail]
    return "".join(lines)


_NUMPY_SCALARS = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "float16", "float32", "float64")


def _numpy_scalar(value, modules: dict) -> str | None:
    """Source that rebuilds a NumPy scalar of a plain type exactly (``numpy.float32(1e-06)``), else None."""
    numpy = modules.get("numpy")
    name = _text(_class_name(type(value)))
    if name not in _NUMPY_SCALARS or not _is(numpy, types.ModuleType) or _attr(numpy, name) is not type(value):
        return None
    return f'__import__("numpy").{name}({_literal(value.item())})'  # item(): the same number, as a Python one


# -- finding the source of a definition -----------------------------------------------------------------

def _subject(what: str, user: str | None) -> str:
    """``what`` as a sentence names it: where another definition uses it, which one (None: the entry)."""
    return f"{what}, which your {user} uses," if user else f"your {what}"


def _definition(value, name: str | None, user: str | None) -> tuple[str, str, int | None]:
    """The source of the statement that defined ``value`` (decorators included, dedented), the name it
    binds and the line of its cell it begins on, read from the cell (or file) its code came from."""
    if _is(value, type):
        return _class_definition(value, user)
    function = _unwrap(value)
    own, qualified, code = _text(function.__name__), _text(function.__qualname__), function.__code__
    what = f"function {name or own or ''}".rstrip()
    if own is None or qualified is None or type(code.co_filename) is not str:
        raise NotWritable(f"{_subject(what, user)} carries a __name__, __qualname__ or file name that is not a "
                          f"plain string, so its source is not looked up: define it again in a cell, or give "
                          f"check(source=...)")
    if "<locals>" in qualified or "." in qualified:
        raise NotWritable(f"{_subject(what, user)} is defined inside another function or class, so it cannot be "
                          f"written out alone: define it at the top level of a cell")
    found = _statement(_source_lines(code.co_filename), code.co_firstlineno, own, lambda_ok=True)
    if found is None:
        raise NotWritable(f"the source of {_subject(what, user).removeprefix('your ')} is not available (it was "
                          f"not written in a cell or a file): define it in a cell, or give check(source=...)")
    return found


def _class_definition(cls: type, user: str | None) -> tuple[str, str, int | None]:
    name, qualified = _text(_class_name(cls)), _text(_class_qualname(cls))
    what = f"class {name or ''}".rstrip()
    if name is None or qualified is None:
        raise NotWritable(f"{_subject(what, user)} carries a __name__ or __qualname__ that is not a plain string, "
                          f"so its source is not looked up: define it again in a cell, or give check(source=...)")
    if "<locals>" in qualified or "." in qualified:
        raise NotWritable(f"{_subject(what, user)} is defined inside a function or another class: define it at "
                          f"the top level of a cell")
    for method in _methods(cls):  # a method's code says which cell holds the class
        code = method.__code__
        found = _statement(_source_lines(code.co_filename), code.co_firstlineno, name, classes=True)
        if found is not None:
            return found
    runs: dict[str, int] = {}  # without a method, each cell's definition, and when IPython last ran it
    for lines, number in _cells():
        if (found := _statement(lines, None, name, classes=True)) is not None:
            runs[found[0]] = max(runs.get(found[0], -1), -1 if number is None else number)
    if len(runs) == 1 or (runs and min(runs.values()) >= 0):
        return max(runs, key=runs.get), name, None
    where = "is in no cell" if not runs else "is in more than one cell, and it has no method to tell which one ran"
    raise NotWritable(f"the source of the {_subject(what, user).removeprefix('your ')} {where}: give the whole "
                      f"module as check(source=...)")


def _source_lines(filename: str) -> list[str]:
    """The lines of a cell as ``linecache`` holds them (IPython keeps each cell there), or of a file the
    cache lacks, read from the disk; none where neither has plain lines."""
    entry = _entry(_attr(linecache, "cache"), filename)
    if type(entry) is tuple and len(entry) == 4:
        lines = entry[2]
    elif entry is _MISSING and os.path.isfile(filename):
        try:
            with tokenize.open(filename) as file:
                lines = file.readlines()
        except (OSError, SyntaxError, UnicodeDecodeError):
            return []
    else:
        return []
    return lines if type(lines) is list and all(type(line) is str for line in lines) else []


def _cells() -> list[tuple[list[str], int | None]]:
    """The lines of every notebook cell in ``linecache`` (IPython keeps them there with no time stamp), with
    its execution number where IPython has it."""
    numbers = _execution_numbers()
    return [(entry[2], numbers.get(filename)) for filename, entry in _names(_attr(linecache, "cache")).items()
            if type(entry) is tuple and len(entry) == 4 and entry[1] is None and type(entry[2]) is list
            and all(type(line) is str for line in entry[2])]


def _execution_numbers() -> dict[str, int]:
    """IPython's execution number of each cell's file name, where IPython runs the notebook: its shell's
    compiler records them (read from the dicts of IPython's shell class, shell and compiler, calling nothing)."""
    module = _entry(sys.modules, "IPython.core.interactiveshell", None)
    shell_class = _entry(_attr(module, "__dict__"), "InteractiveShell", None)
    if not _is(module, types.ModuleType) or not _is(shell_class, type):
        return {}
    shell = _first(_class_items(shell_class), "_instance", None)
    compiler = _entry(_attr(shell, "__dict__"), "compile", None)
    numbers = _names(_entry(_attr(compiler, "__dict__"), "_filename_map", None))
    return {filename: number for filename, number in numbers.items() if type(number) is int}


def _statement(lines: list[str], lineno: int | None, name: str, *, classes: bool = False,
               lambda_ok: bool = False) -> tuple[str, str, int] | None:
    """In the cell or file of ``lines``, the outermost statement (not inside a function or class) that
    defines ``name`` and covers line ``lineno`` (any line, where None); its dedented source, the name it
    binds and its first line. For a lambda, an assignment of it to one name."""
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
            return textwrap.dedent("".join(lines[start - 1:node.end_lineno])), node.name, start
        if (lambda_ok and name == "<lambda>" and isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda)
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            return textwrap.dedent("".join(lines[start - 1:node.end_lineno])), node.targets[0].id, start
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


# -- constants ------------------------------------------------------------------------------------------

def _from_line(module: types.ModuleType, attribute: str, name: str) -> str:
    return f"from {_attr(module, '__name__')} import {attribute}" + (f" as {name}" if attribute != name else "")


def _literal(value, depth: int = 0) -> str | None:
    """Python source that rebuilds ``value`` when it is a plain constant (numbers, strings, bytes, None, and
    tuples, lists, sets and dicts of them), else None. Types are compared by identity."""
    if depth > 20:
        return None
    kind = type(value)
    if kind is float and value != value or kind is float and value in (float("inf"), float("-inf")):
        return f'float("{value}")'
    if _one_of(kind, _LITERAL_TYPES):
        return repr(value)
    items = [_literal(v, depth + 1) for v in value] if _one_of(kind, (tuple, list, set, frozenset)) else None
    if kind is dict:
        items = [f"{k}: {v}" if k is not None and v is not None else None
                 for k, v in ((_literal(k, depth + 1), _literal(v, depth + 1)) for k, v in list(value.items()))]
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
