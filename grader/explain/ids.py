"""Every diagnosis id the explanations give, declared once with what it says.

A :class:`~grader.core.verdict.Diagnosis` carries one of these ids (reports and the JSON verdict show it);
the code that makes one uses the name declared here, never the string. The relations between the expected
and the actual output (:mod:`grader.explain.relations`) are found from the two outputs alone, so a known
mistake may cite one as its signature (``diagnosis`` in pitfalls.toml, ``DIAGNOSIS`` in a variant file: a
learner's output failing with that relation also fits the mistake); `grade check` refuses a citation of
anything else (:func:`unknown_diagnoses`). A new diagnosis is one line here and the code that finds it.
"""

from __future__ import annotations

import difflib

from grader.problem.errors import shown_path
from grader.problem.variant import read_constant

DIAGNOSES: dict[str, str] = {}  # id -> what it says, in one line
RELATIONS: set[str] = set()  # the ids grader.explain.relations.diagnose gives: those a known mistake may cite


def _declare(id_: str, says: str, relation: bool = False) -> str:
    """Declares ``id_`` (saying ``says``; ``relation``: one of RELATIONS) and returns it, for its name."""
    DIAGNOSES[id_] = says
    if relation:
        RELATIONS.add(id_)
    return id_


# The relations between the expected and the actual output (grader.explain.relations): a known mistake may cite these.
CONSTANT_FACTOR = _declare("constant_factor", "every value the expected one times a constant (-1: a sign flip)", True)
REDUCED_PRECISION = _declare("reduced_precision", "errors of the size rounding to bfloat16 or float16 makes", True)
TRANSPOSE = _declare("transpose", "two axes of the same size swapped", True)
REVERSED_AXIS = _declare("reversed_axis", "the slices along one axis in reverse order", True)
PERMUTED_AXIS = _declare("permuted_axis", "the slices along one axis right, in another order", True)
SHIFTED = _declare("shifted", "the output shifted by a few places along one axis", True)
WRONG_ORDER = _declare("wrong_order", "the right values in other places (a flattening order among them)", True)
NONFINITE = _declare("nonfinite", "NaN or inf where the inputs explain it (zero rows, overflow) or in a pattern", True)
OVERFLOW = _declare("overflow", "finite but wrong exactly where squaring an input overflows float32", True)
RESIDUAL_ADDED = _declare("residual_added", "the expected output plus an input: a residual where none belongs", True)
RESIDUAL_MISSING = _declare("residual_missing", "the expected output minus an input: a residual left out", True)

# Found by running the learner's code again (grader.explain.diagnosis, .dependence, .parts): no signature.
PARAMETER_VALUES = _declare("parameter_values", "a parameter holds the initial values the reference gives another")
PARAMETERS_NOT_FOLLOWED = _declare("parameters_not_followed", "right at the initial parameters, wrong with them moved")
DEPENDENCE = _declare("dependence", "output rows that depend on other input positions than the reference's")
VALUES_REARRANGED = _declare("values_rearranged", "a part that computes the right values in another layout")

def unknown_diagnoses(problem) -> dict[str, str]:
    """The known mistakes of ``problem`` (a :class:`~grader.problem.problems.Problem`) that cite a diagnosis
    no relation gives, each with the sentence that says so (the file, the entry, the ids it may cite): name
    -> sentence. Such a citation never matches, so the mistake would be named on its values alone."""
    allowed = ", ".join(sorted(RELATIONS))
    said = {}
    for name, path in problem.variants("pitfalls").items():
        try:
            cited = read_constant(path, "DIAGNOSIS")
        except (SyntaxError, ValueError):
            continue  # a file that does not read: the pitfall's other rows of `grade check` say so
        if cited is None or cited in RELATIONS:
            continue
        if path.parent == problem.solution_folder / "pitfalls":
            where = f"{shown_path(path, problem.root)}: DIAGNOSIS"
        else:  # written from pitfalls.toml (grader.problem.pitfalls)
            toml = shown_path(problem.solution_folder / "pitfalls.toml", problem.root)
            where = f"{toml}: pitfall {name!r}: diagnosis"
        close = difflib.get_close_matches(cited, sorted(RELATIONS), n=1, cutoff=0.6)
        guess = f" (did you mean {close[0]}?)" if close else ""
        said[name] = f"{where} {cited!r} is no relation's id{guess}; a known mistake may cite {allowed}"
    return said
