"""Every problem, through `grade check`: reference passes, stub not started, each known mistake fails and
is named (on generated inputs alone too), each correct alternative passes, examples and golden outputs hold.

One test per item, so a failure names the problem and the variant; each problem is checked once per
session.
"""

import os
import shutil
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from conftest import ROOT
from grader import check, problems

SLUGS = problems.slugs(ROOT)


def _check_every_problem() -> dict[str, dict[str, check.Row]]:
    """`grade check` over every problem once, problems in parallel as the command does it, in a cache of
    its own (removed afterwards)."""
    by_slug: dict[str, dict[str, check.Row]] = {slug: {} for slug in SLUGS}
    folder = tempfile.mkdtemp(prefix="grade-check-cache-")
    try:
        for row in check.check_in_parallel(ROOT, SLUGS, update_golden=False, env=dict(os.environ, GRADE_CACHE_DIR=folder),
                                           progress=PROGRESS.append):
            by_slug[row.problem][row.item] = row
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return by_slug


_started: list[Future] = []
PROGRESS: list[str] = []  # what `grade check` shows on a terminal while it runs


def start_check() -> Future:
    """The check, started in the background once (conftest starts it as soon as these tests are selected:
    it is most of the suite's work, and the tests that run before these mostly wait on processes and time
    limits)."""
    if not _started:
        _started.append(ThreadPoolExecutor(max_workers=1).submit(_check_every_problem))
    return _started[0]


def all_rows() -> dict[str, dict[str, check.Row]]:
    return start_check().result()


def rows(slug: str) -> dict[str, check.Row]:
    return all_rows()[slug]


def items(slug: str) -> list[str]:
    problem = problems.load(ROOT, slug)
    names = ["metadata", "files", "signature", "strategy", "hints", "authoring", "golden outputs", "reference passes", "stub is not_started"]
    names += [f"statement: {ex.name}" for ex in problem.examples if ex.expected is not None]
    names += [f"pitfall {name}" for name in problem.variants("pitfalls")]
    names += [f"alternative {name}" for name in problem.variants("alternatives")]
    return names


CASES = [(slug, item) for slug in SLUGS for item in items(slug)]


@pytest.mark.parametrize("slug, item", CASES, ids=[f"{s}: {i}" for s, i in CASES])
def test_check_item(slug, item):
    row = rows(slug).get(item)
    assert row is not None, f"grade check did not report {item!r}: {sorted(rows(slug))}"
    assert row.ok, row.detail


@pytest.mark.parametrize("slug", SLUGS)
def test_check_reports_nothing_unexpected(slug):
    unexpected = {item: row.detail for item, row in rows(slug).items() if not row.ok and item not in items(slug)}
    assert not unexpected


@pytest.mark.parametrize("slug", SLUGS)
def test_each_problem_ships_pitfalls_and_alternatives(slug):
    problem = problems.load(ROOT, slug)
    assert len(problem.variants("pitfalls")) >= 5
    assert len(problem.variants("alternatives")) >= 2


def test_check_reports_progress_as_each_problem_is_done():
    all_rows()
    assert [line.split(" problems checked")[0] for line in PROGRESS] == [f"{k} of {len(SLUGS)}" for k in range(1, len(SLUGS) + 1)]
    assert sorted(line.rsplit("(", 1)[1].split(":")[0] for line in PROGRESS) == sorted(SLUGS)
