"""problem.toml read: every value checked, every mistake a ProblemError that names the key and what it must be.

:func:`fields` reads what a :class:`~grader.problem.problems.Problem` is made of, :func:`examples` its
``[[examples]]`` once the problem exists (an example's arguments are checked against its kinds, its output
against the shape the problem computes). Unknown keys are errors: a misspelt optional key (`call_second`)
would otherwise fall back to its default without a word.
"""

from __future__ import annotations

import keyword
import math

from grader.core import kinds
from grader.problem.errors import ProblemError, describe, shown
from grader.problem.shapes import check_shape_expression, splices

# Every key problem.toml may hold.
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


def number(value) -> bool:
    """Whether ``value`` is a finite int or float (a bool is neither here)."""
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


class TomlReader:
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
            raise self.error(label, f"must be {wanted}, got {shown(table[key])}")
        return table[key]

    def table(self, key: str, required: bool = True) -> dict:
        found = self.get(self.meta, key, "", lambda v: isinstance(v, dict), "a table", _MISSING if required else {},
                         label=f"[{key}]")
        self.known(found, TABLES[key], f"{key}.", f"the keys of [{key}]")
        return found


def fields(read: TomlReader, slug: str) -> dict:
    """The Problem's fields (but its slug, root and examples) from the problem.toml ``read`` reads, every
    value checked, in the order a reader of the file meets them."""
    meta = read.meta
    read.known(meta, TOP_KEYS, "", "the top-level keys and tables")
    title = read.get(meta, "title", "", lambda v: isinstance(v, str) and v.strip(), "a non-empty string")
    entry = read.get(meta, "entry", "", lambda v: isinstance(v, str), "a string")
    read.get(meta, "order", "", number, "a number (the problem's place in the learning order)", 0)
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
    dtype, shape, axes = _output(read, args)
    exact, tol = _tolerance(read)
    limits = read.table("limits", required=False)
    seconds = {key: read.get(limits, key, "limits.", lambda v: number(v) and v > 0, "a positive number of seconds",
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
            raise read.error(f"positions.{name}", f"must be an axis, a whole number >= 0, got {shown(axis)}")
    teaches = read.table("teaches", required=False)
    if teaches:
        read.get(teaches, "what", "teaches.", lambda v: isinstance(v, str) and v.strip(), "a non-empty string")
        read.get(teaches, "calls", "teaches.", _strings, "a list of function names")
        read.get(teaches, "avoids", "teaches.", _strings, "a list of function names", [])
    return dict(
        title=title, args=dict(args), output_dtype=dtype, output_shape=list(shape),
        exact=exact, rtol=float(tol["rtol"] or 0.0), atol=float(tol["atol"] or 0.0),
        call_seconds=float(seconds["call_seconds"]), problem_seconds=float(seconds["problem_seconds"]),
        memory_mib=memory_mib, max_examples=max_examples, axis_names=axes, positions=dict(positions),
        teaches=dict(teaches),
    )


def _output(read: TomlReader, args: dict) -> tuple[str, list[str], list[str] | None]:
    """[output]: its dtype, its shape's expressions (checked against ``args``) and its axes' names."""
    output = read.table("output")
    dtype = read.get(output, "dtype", "output.", _output_dtype, f"one of {', '.join(kinds.ARRAY_DTYPES)}")
    shape = read.get(output, "shape", "output.", _strings,
                     'a list of strings, expressions over the arguments (e.g. ["T", "T"])')
    for expr in shape:
        check_shape_expression(expr, args, read.where)
    axes = read.get(output, "axes", "output.", _strings, "a list of strings, one name per axis of the output", None)
    if axes is not None and not splices(shape) and len(axes) != len(shape):
        raise read.error("output.axes", f"is {axes}, but output.shape has rank {len(shape)}")
    return dtype, shape, axes


def _tolerance(read: TomlReader) -> tuple[bool, dict]:
    """[tolerance]: exact, or rtol and atol (both)."""
    tolerance = read.table("tolerance")
    exact = read.get(tolerance, "exact", "tolerance.", lambda v: isinstance(v, bool), "true or false", False)
    tol = {key: read.get(tolerance, key, "tolerance.", lambda v: number(v) and v >= 0, "a number >= 0", None)
           for key in ("rtol", "atol")}
    if exact and any(v is not None for v in tol.values()):
        raise read.error("tolerance.exact", "is true, which leaves no room for rtol and atol; give one or the other")
    for key, value in tol.items():
        if not exact and value is None:
            raise read.error(f"tolerance.{key}", "is missing; [tolerance] needs exact = true, or rtol and atol")
    return exact, tol


def examples(read: TomlReader, problem) -> list[tuple[str, dict, object]]:
    """The ``[[examples]]`` of the problem.toml ``read`` reads, as (name, arguments, expected output or None),
    each checked against ``problem`` (the :class:`~grader.problem.problems.Problem` made of its
    :func:`fields`): its arguments against the kinds, its expected output against the output's shape."""
    tables = read.get(read.meta, "examples", "", lambda v: isinstance(v, list) and all(isinstance(e, dict) for e in v),
                      "a list of [[examples]] tables", [])
    return [_example(read, problem, f"examples[{i}]", ex) for i, ex in enumerate(tables)]


def _example(read: TomlReader, problem, key: str, ex: dict) -> tuple[str, dict, object]:
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
        raise read.error("output.shape", f"cannot be computed for {key}: {describe(exc)}") from None
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
            raise read.error(f"{key}.expected", f"must hold numbers, got {shown(ex['expected'])}")
        if expected.shape != natural:
            raise read.error(f"{key}.expected", f"has shape {expected.shape}, but the output's shape is {natural}")
        expected = expected.astype(problem.output_dtype)
    return name, ex_args, expected
