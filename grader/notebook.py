"""``grader.notebook``, the path learners and instructors use: the module :mod:`grader.commands.notebook` itself."""

import sys

from grader.commands import notebook

sys.modules[__name__] = notebook
