"""Learner-like files that raise, loaded and described as a worker does (grader.sandbox.tracebacks): what
the traceback tests (tests/sandbox/test_tracebacks.py) and the text report's (tests/render/test_report_text.py)
raise."""

from __future__ import annotations

import re
import types

import pytest

from grader.sandbox import tracebacks

LIBRARY_RUN = re.compile(r"^  \.\.\. \d+ frames? in \S+ left out \.\.\.$")


def raised(tmp_path, source: str, call: str, *args, name: str = "learner.py"):
    """``call(*args)`` from ``source`` loaded as the worker loads a file, described as the worker does."""
    path = tmp_path / name
    path.write_text(source)
    module = types.ModuleType("kata_test")
    exec(compile(source, str(path), "exec"), module.__dict__)
    with pytest.raises(BaseException) as info:
        getattr(module, call)(*args)
    return tracebacks.describe(info.value, str(path), during="call"), str(path)


@pytest.fixture
def unfiltered():
    """JAX's own frames kept, as a learner with JAX_TRACEBACK_FILTERING=off would have them."""
    import jax

    before = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", "off")
    yield
    jax.config.update("jax_traceback_filtering", before)


JAX_DEEP = '''import jax.numpy as jnp


def helper(x):
    y = x * 2
    return jnp.dot(y, jnp.ones((3, 5)))


def entry(x):
    return helper(x)


def chained(x):
    try:
        return helper(x)
    except TypeError as exc:
        raise ValueError("could not project") from exc


def during(x):
    try:
        return helper(x)
    except TypeError:
        return undefined_name
'''
