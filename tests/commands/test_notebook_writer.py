"""What the notebook's check() reads of the learner's cells and writes out (grader/commands/notebook_writer.py): it runs nothing of
theirs in the notebook's process, and the module it writes holds the defaults the learner's functions hold
when check() is called.

A trap is a cell object whose every hook (``__eq__``, ``__hash__``, ``__str__``, ``__repr__``, a metaclass's
``__getattribute__``...) appends to a marker file once the notebook arms it; each test shows that the armed
trap does fire when touched, so that the marker's absence says check() touched nothing.
"""

import builtins
import linecache
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.commands import notebook as notebook_mod
from grader.commands.notebook import NotWritable, check, module_source
from test_notebook import CORRECT_SHIFT, Notebook

TRAPS = """
ARMED = False

def _ran(*_):
    if ARMED:
        open({marker!r}, "a").write("ran")
    return True

class Odd:
    def __eq__(self, other):
        return _ran()

    def __ne__(self, other):
        return _ran()

    def __hash__(self):
        _ran()
        return 0

    def __str__(self):
        _ran()
        return "__main__"

    __repr__ = __format__ = __str__

    def __getattr__(self, name):
        return _ran()

class Sly(str):
    def __eq__(self, other):
        return _ran()

    def __hash__(self):
        _ran()
        return str.__hash__(self)

    def __format__(self, spec):
        _ran()
        return str(self)

class Meta(type):
    def __eq__(cls, other):
        return _ran()

    def __hash__(cls):
        _ran()
        return id(cls)

    def __getattribute__(cls, name):
        _ran()
        return type.__getattribute__(cls, name)

class Thing(metaclass=Meta):
    pass
"""


@pytest.fixture
def notebook(tmp_path):
    """A notebook whose first cell defines the traps (Odd, Sly, Meta, Thing), not armed yet."""
    made = Notebook()
    made.marker = tmp_path / "ran"
    made.cell(TRAPS.format(marker=str(made.marker)))
    yield made
    for filename in made.files:
        linecache.cache.pop(filename, None)


def armed(notebook, action):
    """Run ``action()`` with the notebook's traps armed; what it returns, or the NotWritable it raises."""
    notebook.namespace["ARMED"] = True
    try:
        return action()
    except NotWritable as exc:
        return exc
    finally:
        notebook.namespace["ARMED"] = False


def fires(notebook, touch) -> bool:
    """Whether the armed trap writes its marker when ``touch()`` runs: the trap is live."""
    armed(notebook, touch)
    return notebook.marker.exists()


# -- nothing of the learner's runs ----------------------------------------------------------------------

@pytest.mark.parametrize("helper", ["def helper(x):\n    return x\n\nhelper.__module__ = Odd()",
                                    "class helper:\n    __module__ = Odd()\n\n    def __init__(self, x):\n"
                                    "        self.x = x"], ids=["function", "class"])
def test_a_module_name_with_its_own_eq_runs_nothing_in_the_notebook(notebook, helper):
    notebook.cell(helper).cell("def shift(seed, x):\n    return helper(x)\n")
    refused = armed(notebook, lambda: module_source(notebook["shift"], "rel_shift"))
    result = armed(notebook, lambda: check("rel_shift", notebook["shift"]))
    assert not notebook.marker.exists()
    assert isinstance(refused, NotWritable)
    assert str(refused).startswith("'helper', which your function shift uses, carries a __module__ that is an "
                                   "object of type Odd rather than a string")
    assert result.status == "error" and result.verdict.message == str(refused) and result.file is None
    assert fires(notebook, lambda: notebook["helper"].__module__ == "__main__")


def test_a_name_that_is_a_str_subclass_runs_nothing_in_the_notebook(notebook):
    notebook.cell("def helper(x):\n    return x\n\nhelper.__name__ = Sly('helper')\n")
    notebook.cell("def shift(seed, x):\n    return helper(x)\n")
    refused = armed(notebook, lambda: module_source(notebook["shift"], "rel_shift"))
    assert not notebook.marker.exists()
    assert isinstance(refused, NotWritable)
    assert "carries a __name__, __qualname__ or file name that is not a plain string" in str(refused)
    assert fires(notebook, lambda: "helper" == notebook["helper"].__name__)


def test_an_object_whose_metaclass_has_hooks_runs_nothing_when_read(notebook):
    notebook.cell("THING = Thing()\n\ndef shift(seed, x):\n    return x + THING\n")
    refused = armed(notebook, lambda: module_source(notebook["shift"], "rel_shift"))
    assert not notebook.marker.exists()
    assert isinstance(refused, NotWritable)
    assert str(refused).startswith("'THING', which your function shift uses, is an object of type Thing built")
    assert fires(notebook, lambda: type(notebook["THING"]) in (int, float))


@pytest.mark.parametrize("where", ["the notebook's globals", "linecache", "sys.modules"])
def test_a_dict_key_that_hashes_as_a_name_runs_nothing(notebook, where):
    notebook.cell("import jax.numpy as jnp").cell(CORRECT_SHIFT)
    name, held = {"the notebook's globals": ("jnp", notebook.namespace),
                  "linecache": (notebook.files[-1], linecache.cache),
                  "sys.modules": ("jax.numpy", sys.modules)}[where]
    notebook.cell(f"""
        class Key:
            def __eq__(self, other):
                _ran()
                return False

            def __hash__(self):
                return hash({name!r})
        """)
    key = notebook["Key"]()
    value = held.pop(name)  # the key in its slot, then `name` after it: a lookup of `name` meets the key first
    held[key] = None
    held[name] = value
    try:
        text = armed(notebook, lambda: module_source(notebook["my_shift"], "rel_shift"))
        assert not notebook.marker.exists()
        assert fires(notebook, lambda: name in held)
    finally:
        held.pop(key, None)
    assert "import jax.numpy as jnp\n" in text and "def my_shift(seed, x):" in text


def test_a_problem_name_of_the_learners_own_class_runs_nothing(notebook):
    notebook.cell(CORRECT_SHIFT)
    result = armed(notebook, lambda: check(notebook["Odd"](), notebook["my_shift"]))
    assert not notebook.marker.exists()
    assert result.verdict.message == "an object of type Odd is not a problem's name (e.g. 'rel_shift')"
    assert fires(notebook, lambda: repr(notebook["Odd"]()))


def test_a_source_of_the_learners_own_class_is_refused_running_nothing(notebook):
    notebook.cell("class Where(Odd):\n    def __fspath__(self):\n        _ran()\n        return 'rel_shift.py'\n")
    result = armed(notebook, lambda: check("rel_shift", source=notebook["Where"]()))
    assert not notebook.marker.exists()
    assert result.status == "error" and result.file is None
    assert result.verdict.message.startswith("source= takes the module's text or its path")
    assert fires(notebook, lambda: notebook["Where"]().__fspath__())


# -- defaults as the function holds them ----------------------------------------------------------------

CHANGED = {  # a definition whose default reads SCALE, and how the function reached from the written module
    "positional": ("def scaled(x, s=SCALE):\n    return x * s * SCALE\n", lambda f: f.__defaults__),
    "keyword-only": ("def scaled(x, *, s=SCALE):\n    return x * s * SCALE\n", lambda f: f.__kwdefaults__),
    "lambda": ("scaled = lambda x, s=SCALE: x * s * SCALE\n", lambda f: f.__defaults__),
    "method": ("class Scaler:\n    def __call__(self, x, s=SCALE):\n        return x * s * SCALE\n\n"
               "def scaled(x):\n    return Scaler()(x)\n", lambda f: f.__globals__["Scaler"].__call__.__defaults__),
}


@pytest.mark.parametrize("kind", CHANGED)
def test_a_default_bound_to_a_global_changed_since_is_written_as_its_value_at_call_time(notebook, kind):
    source, defaults = CHANGED[kind]
    notebook.cell("SCALE = 2").cell(source).cell("SCALE = 3")
    learners = notebook["scaled"]
    assert defaults(learners) != defaults(_evaluated(source, notebook["SCALE"]))  # the source, run again, differs
    written = _written(module_source(learners, "scaled"), "scaled")
    assert defaults(written) == defaults(learners)
    assert written.__globals__["SCALE"] == notebook["SCALE"] and written(5) == learners(5)


def test_defaults_the_source_still_gives_are_left_as_written(notebook):
    notebook.cell("import datetime\nimport math\nSCALE = 2\n")
    signature = "def scaled(x, s=SCALE, act=math.tanh, n=-3, at=datetime.date.max, *, shape=(1, 2), name=None):"
    notebook.cell(f"{signature}\n    return x\n")
    text = module_source(notebook["scaled"], "scaled")
    assert signature in text
    written = _written(text, "scaled")
    assert written.__defaults__ == notebook["scaled"].__defaults__
    assert written.__kwdefaults__ == notebook["scaled"].__kwdefaults__


def test_a_default_read_from_a_class_of_the_notebook_is_written_as_its_value(notebook):
    notebook.cell("class Config:\n    scale = 2\n").cell("Config.scale = 5  # the class's source still says 2")
    notebook.cell("def scaled(x, s=Config.scale):\n    return x * s\n")
    written = _written(module_source(notebook["scaled"], "scaled"), "scaled")
    assert written.__defaults__ == notebook["scaled"].__defaults__ != _evaluated("class Config:\n    scale = 2\n"
                                                                                "def scaled(x, s=Config.scale):\n"
                                                                                "    return x\n", None).__defaults__


def test_a_default_that_cannot_be_written_is_refused_naming_its_parameter(notebook):
    notebook.cell("def shift(seed, x, odd=Odd()):\n    return x\n")
    refused = armed(notebook, lambda: module_source(notebook["shift"], "rel_shift"))
    assert not notebook.marker.exists()
    assert isinstance(refused, NotWritable)
    assert str(refused).startswith("the default of the parameter 'odd' of your function shift is an object of "
                                   "type Odd, made when its def ran")


def test_a_numpy_scalar_default_is_written_as_the_same_scalar(notebook):
    notebook.cell("import numpy as np\nEPS = np.float32(1e-6)\n")
    notebook.cell("def norm(x, eps=EPS):\n    return x + eps\n").cell("EPS = np.float32(1e-5)")
    (learners,) = notebook["norm"].__defaults__
    (written,) = _written(module_source(notebook["norm"], "norm"), "norm").__defaults__
    assert type(written) is type(learners) and written == learners != notebook["EPS"]


def test_defaults_set_since_the_def_that_do_not_fit_it_are_refused(notebook):
    notebook.cell("def shift(seed, x, s=1):\n    return x\n\nshift.__defaults__ = (0, 1)\n")
    with pytest.raises(NotWritable, match=r"^the defaults of your function shift are not those its def gives"):
        module_source(notebook["shift"], "rel_shift")


@pytest.mark.grading
def test_a_shift_graded_with_the_default_its_def_bound_passes(tmp_path):
    notebook = Notebook()
    try:
        notebook.cell("import jax.numpy as jnp\nSIDE = (1, 0)\n")
        notebook.cell(CORRECT_SHIFT.replace("(seed, x)", "(seed, x, side=SIDE)").replace("(1, 0))", "side)"))
        notebook.cell("SIDE = (0, 1)  # the side that fails, had the def been run again")
        result = check("rel_shift", notebook["my_shift"])
    finally:
        for filename in notebook.files:
            linecache.cache.pop(filename, None)
    assert result.status == "pass", repr(result)


def _written(text: str, name: str):
    """``name`` in the module ``text``, run here: the test's own code, not the notebook's."""
    namespace = {"__name__": "written"}
    exec(compile(text, "<written>", "exec"), namespace)
    return namespace[name]


def _evaluated(source: str, scale):
    """``source`` run again with SCALE bound to ``scale``: what writing the source as it is would give."""
    namespace = {"SCALE": scale}
    exec(compile(source, "<again>", "exec"), namespace)
    return namespace["scaled"]


# -- outside a notebook, and what a check leaves -----------------------------------------------------------

def test_in_a_script_check_prints_its_report(monkeypatch, capsys):
    result = notebook_mod.usage("rel_shift", "a usage error, for the test")
    monkeypatch.setattr(notebook_mod, "_check", lambda *args: result)
    monkeypatch.delattr(sys, "ps1", raising=False)
    monkeypatch.delattr(builtins, "__IPYTHON__", raising=False)
    assert notebook_mod.check("rel_shift", source="x.py") is result
    assert "a usage error, for the test" in capsys.readouterr().out
    monkeypatch.setattr(builtins, "__IPYTHON__", True, raising=False)  # a notebook shows the result itself
    notebook_mod.check("rel_shift", source="x.py")
    assert capsys.readouterr().out == ""


def test_kept_modules_go_once_a_check_passes_or_after_a_day(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def kept(name: str, age: float = 0.0, extra: bool = False) -> Path:
        folder = tmp_path / f"grade-rel_shift-{name}"
        folder.mkdir()
        (folder / "rel_shift.py").write_text("")
        if extra:
            (folder / "mine.txt").write_text("not a check's")
        os.utime(folder, (time.time() - age, time.time() - age))
        return folder

    old, recent, current, foreign = kept("old", 2 * 86400), kept("recent"), kept("current"), kept("foreign", extra=True)
    notebook_mod.forget_kept("rel_shift", current, everything=False)
    assert not old.exists() and recent.exists() and current.exists() and foreign.exists()
    notebook_mod.forget_kept("rel_shift", None, everything=True)
    assert not recent.exists() and not current.exists() and foreign.exists()
