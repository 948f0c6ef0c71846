"""Reading a notebook's objects without running their code (grader/commands/notebook_objects.py): what a
learner's class could run on a plain getattr (a property, __getattr__, a metaclass) never runs."""

import pytest

from grader.commands.notebook_objects import _attr, _is, _methods, _module_of, _names, _unwrap


class Loud(type):
    def __getattribute__(cls, name):
        raise AssertionError(f"ran the metaclass for {name}")


class Trap(metaclass=Loud):
    tag = "kept"

    @property
    def value(self):
        raise AssertionError("ran a property")

    def __getattr__(self, name):
        raise AssertionError("ran __getattr__")

    def method(self):
        return 1


def test_attributes_are_read_from_the_dicts_never_through_the_learners_code():
    trap = object.__new__(Trap)
    assert _attr(trap, "value") is None and _attr(trap, "missing", "default") == "default"
    assert _attr(trap, "tag") == "kept" and _module_of(Trap) == __name__
    assert [f.__name__ for f in _methods(Trap)] == ["value", "__getattr__", "method"]  # a property by its getter


def test_types_and_names_are_compared_by_identity_not_by_the_learners_eq():
    class Name(str):
        def __eq__(self, other):
            raise AssertionError("ran __eq__")

        __hash__ = str.__hash__

    assert _names({Name("x"): 1, "y": 2}) == {"y": 2}
    assert _is(Trap, type) and not _is("x", type)


def test_a_decorated_function_is_unwrapped_to_the_one_it_wraps():
    def inner():
        return 1

    def wrapper():
        return inner()

    wrapper.__wrapped__ = inner
    assert _unwrap(wrapper) is inner
    with pytest.raises(AssertionError):
        Trap.tag  # noqa: B018 (the metaclass is real: a plain getattr would run it)
