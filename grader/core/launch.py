"""How every grading process the grader starts is started: an isolated interpreter.

``python -I -B -u`` (no current folder, no PYTHONPATH, no user site-packages on the import path, no PYTHON*
variable read) runs this file, which imports the package ``grader`` it lies in from its own folder (the
same grader as the process that started it, wherever that one found it: installed, editable, or a
checkout on PYTHONPATH), without putting the folder around it on the path, then runs the module named
first on its command line as ``python -m`` would. So a `grade` started from a class's folder imports
nothing from there (a submission named ``json.py`` stays a file), and what the grader imports is the
grader and what the interpreter has installed, wherever the command was typed.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.abspath(__file__)


def python_command(module: str) -> list[str]:
    """The command line that runs ``module`` (``grader.cli``, ...) as a grading process; its arguments follow."""
    return [sys.executable, "-I", "-B", "-u", HERE, module]


def main() -> None:
    import importlib.util
    import runpy

    package = os.path.dirname(os.path.dirname(HERE))  # grader/
    spec = importlib.util.spec_from_file_location("grader", os.path.join(package, "__init__.py"),
                                                  submodule_search_locations=[package])
    sys.modules["grader"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["grader"])

    module = sys.argv.pop(1)
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
