"""What a figure costs beside the grading it draws: for each failing submission named, a plain `grade
<problem> --file F --json` (the whole process, as a learner runs it), then, in this process, the figure of
its report drawn (:func:`grader.render.figures.failure`, PNG written): the first figure of the run with
matplotlib's import, the rest without. One line each, then the medians. ``--save PATH`` writes the
first submission's figure there (the README's picture: ``--save docs/failure.png``).

    .venv/bin/python benchmarks/figures.py [--runs 3] [--save PATH] [t5_relative_bias/offsets_query_minus_key ...]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "submissions"
DEFAULT = ["t5_relative_bias/offsets_query_minus_key", "t5_relative_bias/lookup_reshaped_to_heads",
           "t5_relative_pos/boost_includes_diagonal", "rel_shift/zero_appended_after_rows",
           "sinusoidal_pe/cos_in_even_columns", "alibi_bias/slopes_sorted_descending"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", nargs="*", default=DEFAULT, help="<problem>/<file stem> under tests/submissions")
    parser.add_argument("--runs", type=int, default=3, help="figures drawn of each report")
    parser.add_argument("--save", type=Path, metavar="PATH", help="write the first submission's figure here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from grader.core.verdict_report import Report

    grading, drawing, first = [], [], None
    for name in args.submissions:
        slug, stem = name.split("/")
        file = CORPUS / slug / f"{stem}.py"
        if not file.is_file():
            print(f"{name}: no such file, left out")
            continue
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "grader.cli", slug, "--file", str(file), "--json"],
                              capture_output=True, text=True, cwd=ROOT)
        graded = time.perf_counter() - started
        report = Report.from_json(done.stdout)
        seconds = []
        for _ in range(args.runs):
            started = time.perf_counter()
            from grader.render import figures

            drawn = figures.failure(report)
            seconds.append(time.perf_counter() - started)
        if first is None:
            first, seconds = seconds[0], seconds[1:] or seconds
            if args.save is not None and drawn is not None:
                args.save.write_bytes(drawn.png)
        grading.append(graded)
        drawing.append(statistics.median(seconds))
        panels = len(drawn.panels) if drawn else 0
        print(f"{name}: {report.status.value}; grade {graded:.2f} s, figure {statistics.median(seconds):.3f} s "
              f"({panels} panels, {len(drawn.png) if drawn else 0} bytes of PNG)")
    if drawing:
        print(f"median: grade {statistics.median(grading):.2f} s, figure {statistics.median(drawing):.3f} s; "
              f"the run's first figure, matplotlib imported with it, {first:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
