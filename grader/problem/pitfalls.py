"""The known-wrong variants declared in ``solutions/<slug>/pitfalls.toml``, each written out as a module.

An entry is a change of the reference's source (its ``replace`` list) with the message a learner reads;
the grader writes the reference with that change applied, and the entry's message, diagnosis and stage as
the module's constants (what :func:`grader.problem.variant.notes` reads), into its cache. The variants
written as files (``pitfalls/<id>.py``) need nothing of this: :meth:`~grader.problem.problems.Problem.variants`
lists both.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

from grader.problem.checkout import cache_folder
from grader.problem.errors import ProblemError, one_line, shown, shown_path

PITFALL_KEYS = {"id", "doc", "message", "replace", "diagnosis", "stage"}
# Where a known mistake may show besides the values (``STAGE`` of a variant module, ``stage`` in
# pitfalls.toml): a stage of the comparison (grader.core.compare) before the values. A mistake is named only
# where a learner's output fails in its values or at that stage; `grade check` flags a variant that fails
# at another (a replacement that broke the code).
STAGES = ("values", "finite", "dtype", "shape")


def declared_pitfalls(problem) -> dict[str, Path]:
    """The known-wrong variants declared in ``solutions/<slug>/pitfalls.toml`` of ``problem`` (a
    :class:`~grader.problem.problems.Problem`), each the reference's source with its replacements applied,
    written to ``<cache>/variants/<checkout>/<slug>/<id>.py``: name -> that path.

    Every ``old`` must occur exactly once in the source as the replacements before it left it, so that a
    change to the reference cannot silently leave a variant identical to it, or change it in two places.
    A ``diagnosis`` is only checked to be a string here; `grade check` checks that it names a relation
    (:func:`grader.explain.ids.unknown_diagnoses`)."""
    path = problem.solution_folder / "pitfalls.toml"
    if not path.is_file():
        return {}
    where = shown_path(path, problem.root)
    try:
        entries = tomllib.loads(path.read_text()).get("pitfall", [])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProblemError(f"{where}: {one_line(str(exc))}") from None
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
            raise ProblemError(f"{key}.id must be a lower-case Python name such as wrong_sign, got {shown(name)}")
        key = f"{where}: pitfall {name!r}"
        if name in written:
            raise ProblemError(f"{key} is declared twice")
        for field_name in ("doc", "message"):
            if not (isinstance(entry.get(field_name), str) and entry[field_name].strip()):
                raise ProblemError(f"{key}: {field_name} must be a non-empty string")
        stage = entry.get("stage", "values")
        if stage not in STAGES:
            raise ProblemError(f"{key}: stage must be one of {', '.join(STAGES)}, got {shown(stage)}")
        diagnosis = entry.get("diagnosis")
        if diagnosis is not None and not isinstance(diagnosis, str):
            raise ProblemError(f"{key}: diagnosis must be a string naming a relation of grader/explain/ids.py")
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
                                   f"{shown_path(problem.reference, problem.root)}"
                                   + (" (after the replacements before it)" if j else "") + ", not once: "
                                   + shown(r["old"]))
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
