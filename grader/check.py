"""``grade check``: the instructors' self-check that keeps every problem honest.

For each problem: the metadata is valid; the reference passes; the untouched stub is ``not_started``;
every known-wrong variant fails and is named as its own pitfall (so the strategies are strong enough);
every correct alternative passes; the statement's worked examples and the stored golden outputs match
the reference. Prints a table; exits non-zero on any shortfall.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np

from grader import diagnosis, problems
from grader.engine import Options, grade
from grader.report import case_from_json, case_to_json
from grader.trusted import ReferenceError, Trusted
from grader.verdict import Status


@dataclass
class Row:
    problem: str
    item: str
    ok: bool
    detail: str


def signature_of(path: Path, name: str) -> tuple[list[str], str | None] | None:
    """Parameter names and docstring of function ``name`` in ``path``, read without running it."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return [a.arg for a in node.args.args], ast.get_docstring(node)
    return None


def check_metadata(problem: problems.Problem) -> list[Row]:
    rows = []

    def row(item, ok, detail):
        rows.append(Row(problem.slug, item, ok, detail))

    names = list(problem.args)
    files = {"statement": problem.folder / "README.md", "stub": problem.stub, "strategies": problem.folder / "strategies.py",
             "reference": problem.reference}
    missing = [f"{k} ({problems.relative(p)})" for k, p in files.items() if not p.is_file()]
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
    try:
        sample = problem.validate_strategy()
        row("strategy", True, f"inputs() draws e.g. {sorted(sample)}")
    except problems.ProblemError as exc:
        row("strategy", False, str(exc))
    for kind in ("pitfalls", "alternatives"):
        for name, path in problem.variants(kind).items():
            sig = signature_of(path, problem.slug)
            bad = sig is None or sig[0] != names
            if kind == "pitfalls" and not diagnosis.read_message(path):
                bad = True
            if bad:
                row(f"{kind[:-1]} {name}", False, "needs the entry function with the problem's signature"
                    + (" and a MESSAGE" if kind == "pitfalls" else ""))
    return rows


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
    if update_golden:
        golden = [{"name": ex.name, "args": case_to_json(problem, ex.args),
                   "output": trusted.output("reference", ex.args).tolist()} for ex in problem.examples]
        path.write_text(json.dumps(golden, indent=1) + "\n")
    if not path.is_file():
        rows.append(Row(problem.slug, "golden outputs", False,
                        f"no {problems.relative(path)}; write it with `grade check {problem.slug} --update-golden`"))
        return rows
    bad = []
    for entry in json.loads(path.read_text()):
        args = case_from_json(problem, entry["args"])
        stored = np.asarray(entry["output"], dtype=problem.output_dtype)
        if not trusted.agrees(args, stored.reshape(-1), trusted.output("reference", args)):
            bad.append(entry["name"])
    rows.append(Row(problem.slug, "golden outputs", not bad,
                    "the reference still gives the stored outputs" if not bad
                    else f"the reference drifted from the stored outputs on: {', '.join(bad)}"))
    return rows


def check_problem(root: Path, slug: str, update_golden: bool = False) -> list[Row]:
    try:
        problem = problems.load(root, slug)
    except problems.ProblemError as exc:
        return [Row(slug, "metadata", False, str(exc))]
    rows = [Row(slug, "metadata", True, "problem.toml is valid")] + check_metadata(problem)
    if not all(r.ok for r in rows):
        return rows
    trusted = Trusted(problem)
    options = Options()
    try:
        rows += check_outputs(problem, trusted, update_golden)

        def graded(path: Path, key: str | None, fixed: bool = True):
            started = time.monotonic()
            verdict = grade(problem, path, options, extra=partial(diagnosis.explain, name_only=True),
                            trusted=trusted, subject_key=key, fixed=fixed)
            return verdict, f"{verdict.status} in {time.monotonic() - started:.1f} s"

        verdict, took = graded(problem.reference, "reference")
        rows.append(Row(slug, "reference passes", verdict.status == Status.PASS, f"{took}: {verdict.message}"))
        verdict, took = graded(problem.stub, None)
        rows.append(Row(slug, "stub is not_started", verdict.status == Status.NOT_STARTED, f"{took}: {verdict.message}"))
        for name, path in problem.variants("pitfalls").items():
            # As a learner meets it (fixed examples first), then on generated inputs alone: a mistake
            # that only a fixed example catches means the strategy is too weak.
            details, ok = [], True
            for fixed, how in ((True, "graded"), (False, "generated inputs alone")):
                verdict, took = graded(path, f"pitfall_{name}", fixed)
                named = verdict.pitfall.id if verdict.pitfall else None
                ok &= verdict.status == Status.FAIL and named == name
                if verdict.status == Status.PASS:
                    details.append(f"{how}: slipped through every case ({took}); strengthen strategies.py")
                elif verdict.status == Status.FAIL:
                    where = verdict.counterexample.name if verdict.counterexample else "?"
                    details.append(f"{how}: fails on {where}, named {named} ({took})")
                else:
                    details.append(f"{how}: {took}: {verdict.message}")
            rows.append(Row(slug, f"pitfall {name}", ok, "; ".join(details)))
        for name, path in problem.variants("alternatives").items():
            verdict, took = graded(path, f"alternative_{name}")
            rows.append(Row(slug, f"alternative {name}", verdict.status == Status.PASS, f"{took}: {verdict.message}"))
    except (ReferenceError, problems.ProblemError) as exc:
        rows.append(Row(slug, "reference runs", False, str(exc)))
    finally:
        trusted.close()
    return rows


def print_table(rows: list[Row]) -> None:
    widths = [max(len(getattr(r, f)) for r in rows) for f in ("problem", "item")]
    for r in rows:
        mark = "ok  " if r.ok else "FAIL"
        print(f"{mark}  {r.problem.ljust(widths[0])}  {r.item.ljust(widths[1])}  {r.detail}")


def check_in_parallel(slugs: list[str], update_golden: bool) -> list[Row]:
    """Each problem in a `grade check <slug> --json` process of its own, as many at once as there are cores."""
    from concurrent.futures import ThreadPoolExecutor

    def one(slug: str) -> list[Row]:
        cmd = [sys.executable, "-m", "grader.cli", "check", slug, "--json"] + (["--update-golden"] if update_golden else [])
        done = subprocess.run(cmd, capture_output=True, text=True)
        try:
            return [Row(**row) for row in json.loads(done.stdout)]
        except (ValueError, TypeError):
            return [Row(slug, "check", False, f"the check itself failed: {done.stderr.strip()[-500:]}")]

    with ThreadPoolExecutor(max_workers=max(1, min(len(slugs), os.cpu_count() or 1))) as pool:
        return [row for rows in pool.map(one, slugs) for row in rows]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade check", description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", help="check only this problem")
    parser.add_argument("--update-golden", action="store_true",
                        help="store the reference's outputs on the fixed examples as the new golden outputs")
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = parser.parse_args(argv)
    try:
        root = problems.find_root()
        slugs = [problems.load(root, args.problem).slug] if args.problem else problems.slugs(root)
    except (problems.UsageError, problems.ProblemError) as exc:
        print(f"grade: {exc}", file=sys.stderr)
        return 2
    if len(slugs) == 1:
        rows = check_problem(root, slugs[0], args.update_golden)
    else:
        rows = check_in_parallel(slugs, args.update_golden)
    if args.json:
        print(json.dumps([asdict(r) for r in rows]))
        return 1 if any(not r.ok for r in rows) else 0
    print_table(rows)
    failed = [r for r in rows if not r.ok]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} checks passed" + (f"; {len(failed)} failed" if failed else ""))
    return 1 if failed else 0
