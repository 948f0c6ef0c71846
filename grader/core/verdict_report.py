"""A verdict as it leaves the grader: the typed :class:`Report` that `grade --json` prints and that batch,
Gradescope, the notebook and `grade check` read back, and :data:`SCHEMA`, the published shape of its JSON.

A report mirrors the schema field for field, in its order. :func:`grader.render.report.build` makes one from
a :class:`~grader.core.verdict.Verdict` and its problem, with its arrays whole (NumPy arrays in their natural
shape, which the text report shows as grids); :meth:`Report.to_json` writes the first values of each, flat,
and :meth:`Report.from_json` reads that back into the same type, validated by the schema. Consumers read
attributes; nothing else knows how a report is written out.

Numbers keep the schema's form: a non-finite one is the string ``NaN``, ``Infinity`` or ``-Infinity``
(:func:`number` reads one), so that a report read back equals the one written.

Everything that came from learner code (printed output, exception types and messages, tracebacks, file
names, parameter paths) is untrusted: the builder caps every learner-sized piece, json.dumps escapes it, and
the JSON stays under :data:`MAX_JSON_CHARS` whatever learner code did.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, is_dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Callable, Union

from grader.core.compare import Stage
from grader.core.cut import cut_middle
from grader.core.verdict import SECOND_PROCESS, Check, CheckKind, Diagnosis, Isolation, Pitfall, Status

if TYPE_CHECKING:
    import numpy as np

VALUES_SHOWN = 4096  # values of one array a JSON report carries
MAX_JSON_CHARS = 1 << 20  # --json prints fewer characters than this, whatever learner code did
RECAP = 256  # characters each string keeps where the JSON would be longer than that

Number = Union[float, int, str]  # a non-finite float as "NaN", "Infinity" or "-Infinity"
Values = Union["np.ndarray", tuple]  # whole in-process; on the wire the first VALUES_SHOWN, flat, as Numbers
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_IN_PROCESS = {"in_process": True}  # a field's metadata: kept in-process only, never written to the JSON


def number(value: Number) -> float:
    """A number of a report as a float (the strings of non-finite ones read back)."""
    return _NON_FINITE[value] if isinstance(value, str) else float(value)


def schema_number(value):
    """``value`` as the schema writes a number: a non-finite float as its string."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


# -- the JSON schema ------------------------------------------------------------------------------------

_TEXT = {"type": "string"}
_SHAPE = {"type": "array", "items": {"type": "integer", "minimum": 0}}
_NUMBER = {"anyOf": [{"type": "number"}, {"enum": ["NaN", "Infinity", "-Infinity"]}],
           "description": "a number; non-finite values as the strings NaN, Infinity, -Infinity"}
_VALUES = {"type": "array", "maxItems": VALUES_SHOWN, "items": _NUMBER,
           "description": f"the array's values, flat in C order, at most the first {VALUES_SHOWN}"}


def _nullable(schema: dict) -> dict:
    return {"anyOf": [{"type": "null"}, schema]}


def _record(description: str, **properties) -> dict:
    return {"type": "object", "description": description, "properties": properties,
            "required": list(properties), "additionalProperties": False}


SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "grade --json", **_record(
    "What `grade <problem> --json` prints: exactly one object, for a verdict or a usage error.",
    problem=_nullable(_TEXT),
    status={"enum": [s.value for s in Status if s is not Status.WARN]},
    message=_TEXT,
    isolation={"enum": [i.value for i in Isolation],
               "description": "how learner code was confined: namespaces; user (the kernel refused them, and "
                              "root's grader ran it as an unprivileged user); none, also when no code ran "
                              "(a usage error)"},
    checks={"type": "array", "items": _record(
        "a phase of the run, or a property of the output checked", name=_TEXT,
        status={"enum": [s.value for s in Status]}, message=_TEXT,
        kind={"enum": [k.value for k in CheckKind]})},
    counterexample=_nullable(_record(
        "the input that shows the failure, shrunk, and what happened on it (or loading the file, where that "
        "failed: then with no call)",
        name=_TEXT,
        call={**_TEXT, "description": "the call as code, empty where none was made"},
        inputs={"type": "object", "description": "argument name -> its case-file form (grader.core.kinds); \"@moved\": "
                                                 "true where the parameters were moved from their initial values"},
        expected=_nullable(_VALUES),
        expected_shape=_SHAPE,
        axes=_nullable({"type": "array", "items": _TEXT, "description": "the names of the expected shape's axes"}),
        tolerance=_record("what counts as equal", exact={"type": "boolean"}, atol=_NUMBER, rtol=_NUMBER),
        actual=_nullable(_VALUES),
        actual_shape=_nullable({**_SHAPE, "description": "the natural shape where the answer could be "
                                "compared cell by cell, else the shape of what came back"}),
        actual_truncated={"type": "boolean"},
        diff=_nullable(_record(
            "the staged comparison", stage={"enum": [s.value for s in Stage]},
            message=_TEXT, mismatches={"type": "integer", "minimum": 0},
            first_index=_nullable(_SHAPE), worst_index=_nullable(_SHAPE),
            max_abs_error=_NUMBER, max_rel_error=_NUMBER,
            mismatch=_nullable({"type": "array", "maxItems": VALUES_SHOWN, "items": {"type": "boolean"},
                                "description": "which of the actual values are wrong, in their order"}))),
        error=_nullable(_record(
            "the exception learner code raised", type=_nullable(_TEXT), message=_nullable(_TEXT),
            file=_nullable(_TEXT), line=_nullable({"type": "integer"}), traceback=_nullable(_TEXT))),
        replay=_nullable({**_TEXT, "description": "a command that runs just this case"}),
    )),
    pitfall=_nullable(_record("the known mistake the outputs match", id=_TEXT, message=_TEXT)),
    diagnosis=_nullable(_record("what the relation between the expected and the actual output says, with "
                                "no known mistake needed", id=_TEXT, message=_TEXT)),
    first_wrong_part=_nullable(_record(
        "the first module of the model, in execution order, whose output differs when it runs on the "
        "reference's parameters and inputs", path={**_TEXT, "description": "its path in the module tree"},
        message=_TEXT, details={"type": "array", "items": _TEXT, "description": "what it shows (grids)"})),
    params_diff={"type": "array", "items": _TEXT},
    examples_run={"type": "integer", "minimum": 0},
    duration_s={"type": "number", "minimum": 0},
    output=_TEXT,
)}


class InvalidReport(ValueError):
    """Text that is not one object of :data:`SCHEMA` (a command that broke, or something that only looks like
    `grade --json`); the message says what is wrong, and where."""


# -- the report -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tolerance:
    """What counts as equal: exactly, or within ``atol + rtol * |expected|``."""

    exact: bool
    atol: Number
    rtol: Number


@dataclass(frozen=True)
class Diff:
    """The staged comparison of the counterexample's output (:mod:`grader.core.compare`)."""

    stage: Stage
    message: str
    mismatches: int
    first_index: tuple[int, ...] | None
    worst_index: tuple[int, ...] | None
    max_abs_error: Number
    max_rel_error: Number
    mismatch: Values | None  # which of the actual values are wrong


@dataclass(frozen=True)
class Error:
    """The exception learner code raised (each piece as the worker described it: untrusted)."""

    type: str | None
    message: str | None
    file: str | None
    traceback: str | None
    line: int | None


@dataclass(frozen=True)
class Case:
    """The input that shows the failure and what happened on it (``call`` empty where loading the file failed)."""

    name: str
    call: str
    inputs: dict  # argument name -> its case-file form (grader.problem.cases)
    expected: Values | None
    expected_shape: tuple[int, ...]
    axes: tuple[str, ...] | None
    tolerance: Tolerance
    actual: Values | None
    actual_shape: tuple[int, ...] | None
    actual_truncated: bool
    diff: Diff | None
    error: Error | None
    replay: str | None  # a command that runs just this case

    def flat(self) -> Case:
        """The case as the JSON carries it: each array's first VALUES_SHOWN values, flat."""
        actual, truncated = _first_values(self.actual)
        return replace(self, expected=_first_values(self.expected)[0], actual=actual,
                       actual_truncated=self.actual_truncated or truncated,
                       diff=replace(self.diff, mismatch=_first_values(self.diff.mismatch)[0]) if self.diff else None)


@dataclass(frozen=True)
class WrongPart:
    """The first module of a model whose output differs when it runs alone on the reference's parameters.

    In-process it may hold its outputs whole, for a figure (:mod:`grader.render.figures`); the JSON does
    not carry them (:meth:`flat`)."""

    path: str
    message: str
    details: tuple[str, ...] = ()  # what it shows (grids), a line each
    expected: np.ndarray | None = field(default=None, compare=False, repr=False, metadata=_IN_PROCESS)
    actual: np.ndarray | None = field(default=None, compare=False, repr=False, metadata=_IN_PROCESS)
    mismatch: np.ndarray | None = field(default=None, compare=False, repr=False, metadata=_IN_PROCESS)

    def flat(self) -> WrongPart:
        """The part as the JSON carries it: without its outputs."""
        return replace(self, expected=None, actual=None, mismatch=None)


@dataclass(frozen=True)
class Report:
    """A verdict as :data:`SCHEMA` has it: of a grading, or of a request nothing was graded on (see
    :meth:`not_graded`)."""

    problem: str | None
    status: Status
    message: str
    isolation: Isolation = Isolation.NONE
    checks: tuple[Check, ...] = ()
    counterexample: Case | None = None
    pitfall: Pitfall | None = None
    diagnosis: Diagnosis | None = None
    first_wrong_part: WrongPart | None = None
    params_diff: tuple[str, ...] = ()
    examples_run: int = 0
    duration_s: float = 0.0
    output: str = ""  # what the learner's code printed, both processes'

    @classmethod
    def not_graded(cls, problem: str | None, status: Status | str, message: str) -> Report:
        """The report on a file nothing was graded of (a usage error, no file submitted, a grading that broke
        or was stopped): ``message`` says why, in one sentence."""
        return cls(problem, Status(status), message)

    @property
    def passed(self) -> bool:
        return self.status == Status.PASS

    @property
    def printed(self) -> str:
        """What the learner's code printed, its second process's after its first's, without the grader's
        line between them that ``output`` keeps (the text report shows where the second one starts)."""
        first, mark, second = self.output.partition(f"\n{SECOND_PROCESS}\n")
        return f"{first}\n{second}" if mark else self.output

    def map_text(self, change: Callable[[str], str], *, keep: tuple[str, ...] = ()) -> Report:
        """The report with ``change`` applied to every string in it (the fields named in ``keep`` as they are)."""
        return _map_text(self, change, keep)

    # -- the wire

    def wire(self) -> Report:
        """The report as the JSON carries it: ``from_json(self.to_json())``, without the trip."""
        return self._on_wire()[0]

    def to_json(self) -> str:
        """The one JSON object `grade --json` prints."""
        return self._on_wire()[1]

    def _on_wire(self) -> tuple[Report, str]:
        flat = replace(self, counterexample=self.counterexample.flat() if self.counterexample else None,
                       first_wrong_part=self.first_wrong_part.flat() if self.first_wrong_part else None)
        text = json.dumps(_object(flat))
        if len(text) < MAX_JSON_CHARS:
            return flat, text
        # Only learner text made almost wholly of characters JSON escapes (6 or 12 characters each) gets
        # here: keep every field, each string much shorter (the inputs and the replay command whole).
        cut = flat.map_text(lambda s: cut_middle(s, RECAP), keep=("inputs", "replay"))
        return cut, json.dumps(_object(cut))

    @classmethod
    def from_json(cls, text: str | bytes) -> Report:
        """The report ``text`` holds (what `grade --json` printed); InvalidReport where it is not one."""
        try:
            obj = json.loads(text)
        except ValueError as exc:
            raise InvalidReport(f"not a verdict of `grade --json`: not JSON ({exc})") from None
        from jsonschema.exceptions import best_match

        problem = best_match(_validator().iter_errors(obj))  # None where there is none
        if problem is not None:
            where = "".join(f"[{p!r}]" for p in problem.absolute_path) or "the object"
            raise InvalidReport(f"not a verdict of `grade --json`: at {where}, {problem.message}")
        return _report(obj)


_VALIDATOR = None


def _validator():
    """The schema's validator, made once (jsonschema is imported only where a report is read)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        import jsonschema

        _VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
    return _VALIDATOR


def _first_values(values: Values | None) -> tuple[tuple | None, bool]:
    """``values`` as the JSON carries them (the first VALUES_SHOWN, flat, as Numbers), and whether that is
    fewer than they are."""
    if values is None or isinstance(values, tuple):
        return values, False
    return tuple(schema_number(v) for v in values.flat[:VALUES_SHOWN].tolist()), values.size > VALUES_SHOWN


def _object(value):
    """A report (or a piece of one) as the JSON object it writes: fields in their order, enums as their values."""
    if is_dataclass(value):
        return {f.name: _object(getattr(value, f.name)) for f in fields(value) if not f.metadata.get("in_process")}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_object(v) for v in value]
    return value


def _map_text(value, change: Callable[[str], str], keep: tuple[str, ...]):
    if is_dataclass(value):
        return replace(value, **{f.name: _map_text(getattr(value, f.name), change, keep)
                                 for f in fields(value) if f.name not in keep})
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _map_text(v, change, keep) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_map_text(v, change, keep) for v in value)
    return value


# -- reading a validated object -------------------------------------------------------------------------

def _tuple(values: list | None) -> tuple | None:
    return None if values is None else tuple(values)


def _report(obj: dict) -> Report:
    pitfall, diagnosis, part, case = obj["pitfall"], obj["diagnosis"], obj["first_wrong_part"], obj["counterexample"]
    return Report(
        problem=obj["problem"], status=Status(obj["status"]), message=obj["message"],
        isolation=Isolation(obj["isolation"]),
        checks=tuple(Check(c["name"], Status(c["status"]), c["message"], CheckKind(c["kind"])) for c in obj["checks"]),
        counterexample=_case(case) if case is not None else None,
        pitfall=Pitfall(pitfall["id"], pitfall["message"]) if pitfall is not None else None,
        diagnosis=Diagnosis(diagnosis["id"], diagnosis["message"]) if diagnosis is not None else None,
        first_wrong_part=WrongPart(part["path"], part["message"], tuple(part["details"])) if part is not None else None,
        params_diff=tuple(obj["params_diff"]), examples_run=obj["examples_run"], duration_s=obj["duration_s"],
        output=obj["output"])


def _case(obj: dict) -> Case:
    diff, error = obj["diff"], obj["error"]
    return Case(
        name=obj["name"], call=obj["call"], inputs=obj["inputs"], expected=_tuple(obj["expected"]),
        expected_shape=tuple(obj["expected_shape"]), axes=_tuple(obj["axes"]), tolerance=Tolerance(**obj["tolerance"]),
        actual=_tuple(obj["actual"]), actual_shape=_tuple(obj["actual_shape"]),
        actual_truncated=obj["actual_truncated"],
        diff=Diff(Stage(diff["stage"]), diff["message"], diff["mismatches"], _tuple(diff["first_index"]),
                  _tuple(diff["worst_index"]), diff["max_abs_error"], diff["max_rel_error"],
                  _tuple(diff["mismatch"])) if diff is not None else None,
        error=Error(**error) if error is not None else None,
        replay=obj["replay"])
