"""Every problem, through `grade check`: reference passes, stub not started, each known mistake fails and
is named (on generated inputs alone too), each correct alternative passes, examples and golden outputs hold.

One test per item, so a failure names the problem and the variant; each problem is checked once per
session.
"""

import functools
import os
import shutil
import tempfile

import pytest

from conftest import ROOT
from grader.instructor import check
from grader.problem import problems
from grader.problem.checkout import slugs
SLUGS = slugs(ROOT)


PROGRESS: dict[str, list[str]] = {}  # what `grade check` shows on a terminal while it runs, by problem
FROM_NOTHING = "rel_shift"  # checked in a cache of its own, as an instructor's first check


@functools.cache
def rows(slug: str) -> dict[str, check.Row]:
    """`grade check <slug>`, once per test process: FROM_NOTHING's in a cache of its own (removed
    afterwards), from nothing, as an instructor's first check; every other problem's in the session's cache,
    beside its other gradings (tests/conftest.py groups them), which share its reference's outputs and
    compiled programs."""
    folder = tempfile.mkdtemp(prefix="grade-check-cache-") if slug == FROM_NOTHING else None
    try:
        found = check.check_in_parallel(ROOT, [slug], update_golden=False,
                                        env=dict(os.environ, GRADE_CACHE_DIR=folder) if folder else None,
                                        progress=PROGRESS.setdefault(slug, []).append)
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    return {row.item: row for row in found}


def items(slug: str) -> list[str]:
    problem = problems.load(ROOT, slug)
    names = ["metadata", "files", "signature", "strategy", "hints", "authoring", "golden outputs", "reference passes", "stub is not_started"]
    names += [f"statement: {ex.name}" for ex in problem.examples if ex.expected is not None]
    names += [f"pitfall {name}" for name in problem.variants("pitfalls")]
    names += [f"alternative {name}" for name in problem.variants("alternatives")]
    return names


def checks_of(slug: str) -> type:
    """The tests of one problem, as a class: pytest-xdist runs a class in one test process (a group of its
    own, tests/conftest.py), so each problem is checked once, and the processes share the problems out."""

    class Checks:
        @pytest.mark.parametrize("item", items(slug))
        def test_check_item(self, item):
            row = rows(slug).get(item)
            assert row is not None, f"grade check did not report {item!r}: {sorted(rows(slug))}"
            assert row.ok, row.detail

        def test_check_reports_nothing_unexpected(self):
            unexpected = {item: row.detail for item, row in rows(slug).items() if not row.ok and item not in items(slug)}
            assert not unexpected

        def test_each_problem_ships_pitfalls_and_alternatives(self):
            problem = problems.load(ROOT, slug)
            assert len(problem.variants("pitfalls")) >= 5
            assert len(problem.variants("alternatives")) >= 2

        def test_check_reports_its_progress(self):
            failed = sum(not row.ok for row in rows(slug).values())
            assert len(PROGRESS[slug]) == 1 and PROGRESS[slug][0].startswith("1 of 1 problem checked in ")
            assert PROGRESS[slug][0].endswith(f"({slug}: {f'{failed} failed' if failed else 'ok'})")

    Checks.__name__ = Checks.__qualname__ = f"TestCheck_{slug}"
    return Checks


for _slug in SLUGS:
    globals()[f"TestCheck_{_slug}"] = checks_of(_slug)
