"""How every grading process the grader starts is started: an isolated interpreter.

``python -I -B -u`` (no current folder, no PYTHONPATH, no user site-packages on the import path, no PYTHON*
variable read) runs this file, which puts the folder that holds this grader's package on the path where
the interpreter's own does not already hold it (a checkout on PYTHONPATH, an editable install), then runs
the module named first on its command line as ``python -m`` would. So a `grade` started from a class's
folder imports nothing from there (a submission named ``json.py`` stays a file), and what the grader
imports is the grader and what the interpreter has installed, wherever the command was typed.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.abspath(__file__)


def python_command(module: str) -> list[str]:
    """The command line that runs ``module`` (``grader.cli``, ...) as a grading process; its arguments follow."""
    return [sys.executable, "-I", "-B", "-u", HERE, module]


def main() -> None:
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    if package_parent not in sys.path:
        sys.path.insert(0, package_parent)
    import runpy

    module = sys.argv.pop(1)
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
