"""``grade check``: the instructors' self-check that keeps every problem honest.

For each problem: the metadata is valid; the reference passes; the untouched stub is ``not_started``;
every known-wrong variant fails and is named as its own pitfall (so the strategies are strong enough);
every correct alternative passes; the statement's worked examples and the stored golden outputs match
the reference. Prints a table; exits non-zero on any shortfall. A broken row stops only what depends on
it: a broken variant is not graded, the others are; a broken problem or reference ends its checks with
a row that says so.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np

from grader.core.exits import Exit, usage_error
from grader.commands import learner
from grader.core import kinds
from grader.core.compare import same_values
from grader.explain import diagnosis, ids
from grader.instructor import new
from grader.problem import problems, variant
from grader.problem import checkout
from grader.grading.engine import DRAW_SEED, Options, grade, run_generated
from grader.problem.cases import case_from_json, case_to_json
from grader.grading.errors import ReferenceError
from grader.grading.trusted import Trusted
from grader.core.verdict import Status


@dataclass
class Row:
    problem: str
    item: str
    ok: bool
    detail: str


def signature_of(path: Path, name: str, reference: tuple[list[str], str | None] | None = None
                 ) -> tuple[list[str], str | None] | None:
    """Parameter names and docstring of function ``name`` in ``path``, read without running it (None
    also where the file does not parse). Given the ``reference``'s, a variant's ``name = override(...)``
    (:mod:`grader.problem.variant`) has the reference's signature."""
    try:
        body = ast.parse(path.read_text()).body
    except SyntaxError:
        return None
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return [a.arg for a in node.args.args], ast.get_docstring(node)
        if (reference is not None and isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [name]
                and isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "override"):
            return reference
    return None


def check_metadata(problem: problems.Problem) -> list[Row]:
    rows = []

    def row(item, ok, detail):
        rows.append(Row(problem.slug, item, ok, detail))

    names = list(problem.args)
    files = {"statement": problem.folder / "README.md", "stub": problem.stub, "strategies": problem.folder / "strategies.py",
             "reference": problem.reference}
    missing = [f"{k} ({checkout.relative(p)})" for k, p in files.items() if not p.is_file()]
    row("files", not missing, "missing: " + ", ".join(missing) if missing else "statement, stub, strategies, reference")
    if missing:
        return rows
    stub, ref = signature_of(problem.stub, problem.slug), signature_of(problem.reference, problem.slug)
    ok = stub is not None and ref is not None and stub[0] == names and ref[0] == names and stub[1] == ref[1]
    detail = f"{problem.slug}({', '.join(names)}) in stub and reference, same docstring"
    if not ok:
        detail = (f"stub {stub and stub[0]}, reference {ref and ref[0]}, problem.toml {names}; "
                  f"docstrings {'equal' if stub and ref and stub[1] == ref[1] else 'differ'}")
    row("signature", ok, detail)
    drift = stub_drift(problem.stub, problem.reference)
    row("stub", not drift, "; ".join(drift) + ": learners fill in the stub, so what it gives must be the reference's"
        if drift else "what the stub gives (classes, fields, setup, signatures) is the reference's")
    try:
        sample = problem.validate_strategy()
        row("strategy", True, f"inputs() draws e.g. {sorted(sample)}")
    except problems.ProblemError as exc:
        row("strategy", False, str(exc))
    try:
        hints = learner.load_hints(problem)
        row("hints", True, f"{len(hints)} hints for `grade hint`")
    except problems.ProblemError as exc:
        row("hints", False, str(exc))
    left = authoring_left(problem)
    row("authoring", not left, f"{new.MARKER} left at " + ", ".join(left) if left else f"no {new.MARKER} left")
    for kind in ("pitfalls", "alternatives"):
        for name, path in problem.variants(kind).items():
            sig = signature_of(path, problem.slug, ref)
            bad = sig is None or sig[0] != names
            if kind == "pitfalls" and not bad:
                try:
                    bad = not variant.read_constant(path, "MESSAGE")
                except ValueError:  # a MESSAGE that is not a literal
                    bad = True
            if bad:
                row(f"{kind[:-1]} {name}", False, "needs the entry function with the problem's signature"
                    + (" and a MESSAGE" if kind == "pitfalls" else ""))
    for name, said in ids.unknown_diagnoses(problem).items():  # a citation no relation gives never matches
        row(f"pitfall {name}", False, said)
    return rows


def stub_drift(stub: Path, reference: Path) -> list[str]:
    """Where the code a stub gives differs from the reference's: every class and function of the stub must
    be in the reference with the same bases, decorators, fields and signatures, and the same body wherever
    the stub's is not a TODO (a body that raises NotImplementedError): a learner could not match a module
    tree that the stub's ``setup()`` builds otherwise. Docstrings and comments may differ."""

    def definitions(path: Path) -> dict[str, ast.AST]:
        found = {}
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found[node.name] = node
            if isinstance(node, ast.ClassDef):
                found.update({f"{node.name}.{n.name}": n for n in node.body if isinstance(n, ast.FunctionDef)})
        return found

    def shape(node: ast.AST, without_body: bool) -> str:
        node = copy.deepcopy(node)
        node.body = [] if without_body else [
            s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            and not isinstance(s, ast.FunctionDef)]
        return ast.dump(node)

    ours, theirs = definitions(stub), definitions(reference)
    drift = []
    for name, node in ours.items():
        if name not in theirs:
            drift.append(f"{name} is not in the reference")
        elif shape(node, todo := problems.is_todo(node)) != shape(theirs[name], todo):
            drift.append(f"{name} differs from the reference's")
    return drift


def authoring_left(problem: problems.Problem) -> list[str]:
    """Each file of the problem's two folders still marked for its author, with the lines."""
    left = []
    for folder in (problem.folder, problem.solution_folder):
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".py", ".md", ".toml") and "__pycache__" not in path.parts:
                try:
                    lines = path.read_text().splitlines()
                except (OSError, UnicodeDecodeError):
                    continue
                marked = [str(i) for i, line in enumerate(lines, 1) if new.MARKER in line]
                if marked:
                    left.append(f"{checkout.relative(path)} (line{'s' if len(marked) > 1 else ''} {', '.join(marked)})")
    return left


def golden_path(problem: problems.Problem) -> Path:
    return problem.solution_folder / "golden.json"


def check_outputs(problem: problems.Problem, trusted: Trusted, update_golden: bool) -> list[Row]:
    rows = []
    for ex in problem.examples:
        if ex.expected is not None:
            got = trusted.output("reference", ex.args)
            ok = trusted.agrees(ex.args, ex.expected.reshape(-1), got)
            rows.append(Row(problem.slug, f"statement: {ex.name}", ok,
                            "the reference reproduces it" if ok else f"the reference gives {got.tolist()}"))
    path = golden_path(problem)
    pitfalls = [f"pitfall_{name}" for name in trusted.pitfalls()]
    if update_golden:
        examples = [ex.args for ex in problem.examples]
        mistakes = {key: trusted.outputs(key, examples) for key in pitfalls}
        golden = [{"name": ex.name, "args": case_to_json(problem, ex.args),
                   "output": trusted.output("reference", ex.args).tolist(),
                   "pitfalls": {key.removeprefix("pitfall_"): {"source": trusted.variant_source_key(key),
                                                               "output": outputs[i].tolist()}
                                for key, outputs in mistakes.items() if outputs[i] is not None}}
                  for i, ex in enumerate(problem.examples)]
        path.write_text(json.dumps(golden, indent=1) + "\n")
    if not path.is_file():
        rows.append(Row(problem.slug, "golden outputs", False,
                        f"no {checkout.relative(path)}; write it with `grade check {problem.slug} --update-golden`"))
        return rows
    bad, stale = [], set()
    for entry in json.loads(path.read_text()):
        args = case_from_json(problem, entry["args"])
        stored = np.asarray(entry["output"], dtype=problem.output_dtype)
        if not trusted.agrees(args, stored.reshape(-1), trusted.output("reference", args)):
            bad.append(entry["name"])
        for key in pitfalls:  # every known mistake's output on it, from the variant as it is now
            kept = (entry.get("pitfalls") or {}).get(key.removeprefix("pitfall_"))
            if kept is None or kept["source"] != trusted.variant_source_key(key):
                stale.add(key.removeprefix("pitfall_"))
            elif not matches_stored(trusted, key, args, kept["output"], problem.output_dtype):
                bad.append(f"{entry['name']} ({key.removeprefix('pitfall_')})")
    if stale:
        bad.append(f"the known mistakes changed since: {', '.join(sorted(stale))}")
    rows.append(Row(problem.slug, "golden outputs", not bad,
                    "the reference and the known mistakes still give the stored outputs" if not bad
                    else f"drifted from the stored outputs: {'; '.join(bad)} (`grade check {problem.slug} "
                         f"--update-golden` once the change is meant)"))
    return rows


def matches_stored(trusted: Trusted, key: str, args: dict, stored: list, dtype: str) -> bool:
    """Whether a known mistake, run now, gives the output golden.json keeps for it on ``args``."""
    computed = trusted.outputs(key, [args])[0]
    if computed is None:
        return False
    stored = np.asarray(stored, dtype=dtype).reshape(-1)  # a mistake's output may hold NaN where the stored one does
    return stored.shape == computed.shape and bool(np.all(
        same_values(stored, computed, trusted.problem.rtol, trusted.problem.atol)))


def check_problem(root: Path, slug: str, update_golden: bool = False, progress=None) -> list[Row]:
    """The rows of ``slug``'s checks; ``progress(text)``, when given, hears of each grading as it starts."""
    try:
        problem = problems.load(root, slug)
        problem.variants("pitfalls")  # pitfalls.toml
    except problems.ProblemError as exc:
        return [Row(slug, "metadata", False, str(exc))]
    rows = [Row(slug, "metadata", True, "problem.toml is valid")] + check_metadata(problem)
    broken = {r.item for r in rows if not r.ok}
    if broken & {"files", "signature", "strategy"}:  # what every grading below depends on
        failed = " and ".join(sorted(broken & {"files", "signature", "strategy"}))
        return rows + [skipped(slug, "remaining checks", f"the {failed} check failed above")]
    try:
        gradings = Gradings(problem, progress)
    except (problems.ProblemError, ValueError) as exc:  # grading.py or golden.json
        return rows + [skipped(slug, "reference runs", str(exc))]
    try:
        return rows + gradings.rows(broken, update_golden)
    finally:
        gradings.trusted.close()


class Gradings:
    """`grade check`'s gradings of one problem's reference, stub and variants, all in one trusted worker
    (started afresh after a grading that broke it); ``progress(text)`` hears of each as it starts."""

    def __init__(self, problem: problems.Problem, progress=None):
        self.problem, self.progress = problem, progress
        self.trusted = Trusted(problem, golden_pitfalls=False)
        self.total = 2 + len(problem.variants("pitfalls")) + len(problem.variants("alternatives"))
        self.begun = 0

    def graded(self, path: Path, key: str | None, fixed: bool = True):
        started = time.monotonic()
        verdict = grade(self.problem, path, Options(), extra=partial(diagnosis.explain, name_only=True),
                        trusted=self.trusted, subject_key=key, fixed=fixed)
        return verdict, f"{verdict.status} in {time.monotonic() - started:.1f} s"

    def starting(self, item: str) -> None:
        self.begun += 1
        if self.progress is not None:
            self.progress(f"{self.problem.slug}: {item} ({self.begun} of {self.total})")

    def row(self, item: str, check) -> Row:
        """The row ``item`` from ``check()`` -> (ok, detail); an exception while grading fails that row
        alone, and the reference's worker starts afresh for the next."""
        self.starting(item)
        try:
            return Row(self.problem.slug, item, *check())
        except (ReferenceError, problems.ProblemError) as exc:
            self.trusted.close()
            self.trusted = Trusted(self.problem, golden_pitfalls=False)
            return Row(self.problem.slug, item, False, f"grading it raised: {exc}")

    def rows(self, broken: set[str], update_golden: bool) -> list[Row]:
        """The reference's outputs and grading, then (where it passes) the stub's, each known mistake's (but
        those in ``broken``, whose rows say why) and each alternative's."""
        slug, rows = self.problem.slug, []
        try:
            rows.extend(check_outputs(self.problem, self.trusted, update_golden))
            self.starting("reference")
            verdict, took = self.graded(self.problem.reference, "reference")
        except (ReferenceError, problems.ProblemError) as exc:
            return rows + [skipped(slug, "reference runs", str(exc))]
        rows.append(Row(slug, "reference passes", verdict.status == Status.PASS, f"{took}: {verdict.message}"))
        if verdict.status != Status.PASS:
            return rows + [skipped(slug, "remaining checks", "every other check compares with the reference")]
        rows.append(self.row("stub is not_started", self.stub))
        for name, path in self.problem.variants("pitfalls").items():
            if f"pitfall {name}" not in broken:  # its row says why; the others are still graded
                rows.append(self.row(f"pitfall {name}", partial(check_pitfall, self.graded,
                                                                lambda key: slipped(self.trusted, key), name, path)))
        for name, path in self.problem.variants("alternatives").items():
            if f"alternative {name}" not in broken:
                rows.append(self.row(f"alternative {name}", partial(self.alternative, name, path)))
        return rows

    def stub(self):
        verdict, took = self.graded(self.problem.stub, None)
        return verdict.status == Status.NOT_STARTED, f"{took}: {verdict.message}"

    def alternative(self, name: str, path: Path):
        verdict, took = self.graded(path, f"alternative_{name}")
        return verdict.status == Status.PASS, f"{took}: {verdict.message}"


def skipped(slug: str, item: str, why: str) -> Row:
    return Row(slug, item, False, f"skipped the remaining checks of {slug}: {why}")


def check_pitfall(graded, why_passed, name: str, path: Path) -> tuple[bool, str]:
    """A known-wrong variant fails at the stage its mistake shows (its values, unless it declares another)
    and is named as itself: as a learner meets it (fixed examples first), then on generated inputs alone
    (a mistake only a fixed example catches means the strategy is too weak). One that passes is tried
    on inputs outside the strategies (``why_passed(key)``, see :func:`slipped`), to tell a weak strategy
    from a variant that is the reference's function written otherwise."""
    details, ok = [], True
    declared = variant.notes(path)[2]
    for fixed, how in ((True, "graded"), (False, "generated inputs alone")):
        verdict, took = graded(path, f"pitfall_{name}", fixed)
        ok &= verdict.status == Status.FAIL and verdict.pitfall is not None and verdict.pitfall.id == name
        stage = diagnosis.failing_stage(verdict.counterexample) if verdict.counterexample else None
        if verdict.status == Status.PASS:
            details.append(f"{how}: {why_passed(f'pitfall_{name}')} ({took})")
            break  # generated inputs alone catch no more than every case
        if stage == "error":
            ok = False
            details.append(f"{how}: raises ({verdict.message}): a known mistake returns a wrong answer; {BROKEN}")
        elif stage is not None and stage not in ("values", declared):
            ok = False
            details.append(f"{how}: fails on its {stage} ({verdict.message}) before its values are compared: "
                           f"{BROKEN} If that is the mistake, declare stage = \"{stage}\"")
        elif verdict.status == Status.FAIL:
            where = verdict.counterexample.name if verdict.counterexample else "?"
            details.append(f"{how}: fails on {where} ({took}), {naming(verdict, name)}")
        else:
            details.append(f"{how}: {took}: {verdict.message}")
    return ok, "; ".join(details)


BROKEN = "did a replacement break the code (a `#` in a `new` text comments out the rest of its line)?"
WIDER = 24  # inputs outside the strategies on which a variant that slipped through is compared


def slipped(trusted: Trusted, key: str) -> str:
    """Why a known-wrong variant passed: it differs from the reference somewhere outside what the
    strategies draw (their values scaled and replaced, the parameters moved or not), or nowhere found."""
    problem = trusted.problem
    for args in wider_inputs(problem):
        try:
            expected = trusted.outputs("reference", [args])[0]
        except ReferenceError:
            continue  # outside the reference's domain too
        got = trusted.outputs(key, [args])[0]
        if got is None or not trusted.agrees(args, expected, got):
            return (f"slipped through every case, but differs from the reference on {problem.call_text(args)}, "
                    f"outside what strategies.py draws: strengthen it")
    return (f"agrees with the reference on every case and on {WIDER} inputs outside the strategies: it may be "
            f"the same function as the reference, written otherwise (then it is no mistake: remove it)")


def wider_inputs(problem: problems.Problem) -> list[dict]:
    """Inputs like the strategies' but outside them: each drawn input's floating arrays replaced by
    normal values at scales from 1e-3 to 1e3, its float arguments scaled, its integers (sizes, seeds)
    multiplied by 1, 2, 4 or 8 and its flags flipped at random; half with the parameters moved, where the
    problem has any. Some fall outside the reference's domain too (sizes that no longer fit together):
    the caller skips those."""
    drawn: list[dict] = []
    run_generated(type("Drawing", (), {"problem": problem})(), [], collect=drawn, draws=(DRAW_SEED + 1, WIDER))
    rng = np.random.default_rng(0)
    wider = []
    for i, args in enumerate(drawn):
        changed = {}
        for name, value in ((name, args[name]) for name in problem.args):
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                value = (rng.standard_normal(value.shape) * 10.0 ** rng.uniform(-3, 3)).astype(value.dtype)
            elif isinstance(value, float):
                value = value * float(10.0 ** rng.uniform(-1, 1))
            elif isinstance(value, bool):
                value = bool(rng.integers(2))
            elif isinstance(value, int):
                value = value * int(2 ** rng.integers(4))
            changed[name] = value
        wider.append(kinds.with_moved(changed, problem.moves_parameters and i % 2 == 0))
    return wider


def naming(verdict, name: str) -> str:
    """Which known mistake the failing variant ``name`` was named as, and where none, the variants whose
    outputs it could not be told from."""
    if verdict.pitfall is not None:
        return f"named {verdict.pitfall.id}"
    others = [other for other in verdict.pitfall_candidates if other != name]
    if not others:
        return "named none"
    listed = others[0] if len(others) == 1 else f"{', '.join(others[:-1])} and {others[-1]}"
    variants, advice = ("two variants", "remove one") if len(others) == 1 else (f"{len(others) + 1} variants", "keep one")
    return (f"named none: its outputs are the same as those of {listed} on every input tried ({variants} "
            f"that cannot be told apart; {advice}, or draw inputs that separate them)")


def print_table(rows: list[Row]) -> None:
    widths = [max(len(getattr(r, f)) for r in rows) for f in ("problem", "item")]
    for r in rows:
        mark = "ok  " if r.ok else "FAIL"
        print(f"{mark}  {r.problem.ljust(widths[0])}  {r.item.ljust(widths[1])}  {r.detail}")


def check_in_parallel(root: Path, slugs: list[str], update_golden: bool, env: dict | None = None,
                      progress=None) -> list[Row]:
    """Each problem of the checkout ``root`` in a `grade check <slug> --json` process of its own (with
    ``env``, if given), as many at once as there are cores, the longest first; the rows come back in the
    order of ``slugs``. ``progress(text)``, when given, hears of each problem as it is done."""
    import threading
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from grader.commands import graded

    stop = threading.Event()  # set when this process is interrupted: each check then ends too

    def one(slug: str) -> list[Row]:
        argv = graded.command("check", slug, "--json", *(["--update-golden"] if update_golden else []))
        done = graded.run_command(argv, float("inf"), stop, env, root)
        try:
            return [Row(**row) for row in json.loads(done.stdout)]
        except (ValueError, TypeError):
            said = done.stderr.decode(errors="replace").strip()[-500:]
            return [Row(slug, "check", False, f"the check itself failed: {said}")]

    with ThreadPoolExecutor(max_workers=max(1, min(len(slugs), os.cpu_count() or 1))) as pool:
        try:
            started = {slug: pool.submit(one, slug) for slug in sorted(slugs, key=partial(cost, root), reverse=True)}
            if progress is not None:
                begun = time.monotonic()
                for done, future in enumerate(as_completed(started.values()), 1):
                    slug = next(s for s, f in started.items() if f is future)
                    failed = sum(not r.ok for r in future.result())
                    progress(f"{done} of {len(slugs)} problem{'s' * (len(slugs) > 1)} checked in "
                             f"{time.monotonic() - begun:.0f} s ({slug}: {f'{failed} failed' if failed else 'ok'})")
            return [row for slug in slugs for row in started[slug].result()]
        finally:
            stop.set()


def cost(root: Path, slug: str) -> float:
    """A rough measure of how long checking ``slug`` takes, to start the longest first (so that no core is
    left with one long check at the end): its time limit times the number of variants it grades."""
    try:
        problem = problems.load(root, slug)
        return problem.problem_seconds * (1 + len(problem.variants("pitfalls")) + len(problem.variants("alternatives")))
    except (problems.ProblemError, problems.UsageError):
        return 0.0


def terminal_progress():
    """``progress(text)`` for a terminal: one status line on stderr, rewritten in place ("" clears it)."""
    def progress(text: str) -> None:
        sys.stderr.write("\r\x1b[K" + text[:os.get_terminal_size(sys.stderr.fileno()).columns - 1])
        sys.stderr.flush()
    return progress


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade check", description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", help="check only this problem")
    parser.add_argument("--update-golden", action="store_true",
                        help="store the reference's outputs on the fixed examples as the new golden outputs")
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = parser.parse_args(argv)
    try:
        root = checkout.find_checkout("`grade check`")
        slugs = [problems.load(root, args.problem).slug] if args.problem else checkout.slugs(root)
    except (problems.UsageError, problems.ProblemError) as exc:
        return usage_error(str(exc))
    progress = terminal_progress() if sys.stderr.isatty() else None
    if len(slugs) == 1:
        rows = check_problem(root, slugs[0], args.update_golden, progress)
    else:
        rows = check_in_parallel(root, slugs, args.update_golden, progress=progress)
    if progress is not None:
        progress("")
    if args.json:
        print(json.dumps([asdict(r) for r in rows]))
        return Exit.FAILED if any(not r.ok for r in rows) else Exit.OK
    print_table(rows)
    failed = [r for r in rows if not r.ok]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} checks passed" + (f"; {len(failed)} failed" if failed else ""))
    return Exit.FAILED if failed else Exit.OK
