"""Reading a notebook's objects without running any of their code, for :mod:`grader.commands.notebook_writer`.

check() runs in the notebook's own process, so no code of the learner's may run while it reads their
objects: no __eq__, __hash__, __str__, __repr__ or __format__, no __getattr__, property or other descriptor,
no hook of a metaclass. Attributes are read through the C descriptors of built-in types, or from the
dictionaries of the object and its classes; a dictionary is listed, never looked up in (a key of the
learner's may hash as a name does, and a lookup then runs its __eq__); types are compared by identity
(`in` compares with ==, which a metaclass may define); and a value is used only where its type is exactly
the one expected (a str subclass has its own __eq__, __hash__ and __format__). A function's and a code
object's own attributes are read directly: their types are built in and cannot be subclassed.
"""

from __future__ import annotations

import types

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
