"""The module graded for a function defined in a notebook's cells (:func:`module_source`): its own source and
what it needs from the notebook (import lines for modules and for objects of installed modules, the source
of the functions and classes the notebook defined, plain constants), found by following the global names of
each piece, transitively. Nothing of the notebook's runs meanwhile (:mod:`grader.commands.notebook_objects`).

Cells are found as IPython keeps them: ``linecache`` holds each cell's source under the file name its code
objects carry.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import os
import re
import symtable
import sys
import textwrap
import tokenize
import types

from grader.commands.notebook_objects import (_MISSING, _attr, _class_items, _class_mro, _class_name,
                                              _class_qualname, _entry, _first, _in_classes, _is, _methods,
                                              _module_of, _names, _one_of, _text, _type_label, _unwrap)

_LITERAL_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))


class NotWritable(ValueError):
    """Something the learner's code uses cannot be written into the module that is graded (one sentence)."""


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
