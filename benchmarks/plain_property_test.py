"""The baseline: the property test a user would write instead of using `grade`.

pytest and Hypothesis with their default settings (100 examples; only the deadline is off, since JAX's
first call on each new shape compiles), calling the submission and the reference eagerly in the test's
own process and comparing them with the problem's tolerance (and, for bucket indices, the same
accepted-neighbour rule `grade` uses, so that correct solutions pass here too).

Run by benchmarks/speed.py as
    PLAIN_PROBLEM=<slug> PLAIN_FILE=<submission.py> python -m pytest -q -p no:cacheprovider benchmarks/plain_property_test.py
PLAIN_NO_SHRINK=1 stops at the first failure (for counting caught mistakes, not for timing).
"""

import importlib.util
import os
from pathlib import Path

import numpy as np
from hypothesis import Phase, given, settings

from grader.problem import problems

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = problems.load(ROOT, os.environ["PLAIN_PROBLEM"])
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target) if os.environ.get("PLAIN_NO_SHRINK") else tuple(Phase)


def entry(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, PROBLEM.slug)


SUBMISSION = entry(Path(os.environ["PLAIN_FILE"]), "submission")
REFERENCE = entry(PROBLEM.reference, "reference")
HOOKS = PROBLEM.hooks()


def call(fn, args):
    import jax.numpy as jnp

    values = [jnp.asarray(args[n]) if isinstance(args[n], np.ndarray) else args[n] for n in PROBLEM.args]
    return np.asarray(fn(*values))


@settings(deadline=None, phases=PHASES)
@given(PROBLEM.strategy())
def test_matches_reference(args):
    args = PROBLEM.check_args(args)
    expected, actual = call(REFERENCE, args), call(SUBMISSION, args)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    if PROBLEM.exact:
        good = actual == expected
        alt = getattr(HOOKS, "accept_also", None)
        if alt is not None:
            good |= actual == alt(args, expected)
        assert good.all()
    else:
        np.testing.assert_allclose(actual, expected, rtol=PROBLEM.rtol, atol=PROBLEM.atol)
