"""Pytrees and argument lists as the worker handles them: a tree's leaves by path, arguments split and merged."""

from __future__ import annotations

from grader.sandbox import moved


def flat_tree(tree) -> dict:
    """The leaves of a pytree (a Flax variable collection) by their slash-separated path: ``a/b/kernel``."""
    import jax

    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {moved.path_of(path): leaf for path, leaf in leaves}


def merge(args: list, static: tuple[int, ...], dynamic) -> list:
    """The full argument list from the static ones in ``args`` and the ``dynamic`` others, in order."""
    dynamic = iter(dynamic)
    return [a if i in static else next(dynamic) for i, a in enumerate(args)]
