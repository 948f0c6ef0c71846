"""Inside a worker: Flax parameters moved away from what ``init`` gives, and the parameters an entry creates.

A norm's gain starts at ones and a bias at zeros, so no output at the initial parameters shows a program
that ignores them. A case marked moved (:data:`grader.core.kinds.MOVED`) runs the entry with every parameter
it creates changed, the same way in the learner's worker and in the reference's: a floating leaf at path
``p`` (inside the ``params`` collection, ``block_0/attn/q/kernel``) becomes ``leaf + (leaf * a + b)``, where
``a`` and ``b`` are fixed numbers in [-0.5, 0.5] and [-0.25, 0.25] drawn from a hash of ``p`` and the
leaf's shape. A parameter that is ignored, used twice, transposed or read from the wrong path then
changes the output.

Parameters are found where Flax makes them: what linen's ``Module.init``, ``init_with_output`` and
``lazy_init`` return, and the ``nnx.Param`` values of an NNX module once it is built (outermost only: a
linen ``init`` inside an NNX module's constructor is moved once, with the module). The same hooks observe
the parameters an entry creates without computing its outputs (:func:`observe`), for the parameter
check, and put given values in place of the initial ones (:func:`substituting`). Code that makes its
parameters some other way is not moved, and disagrees with the reference there.

What :func:`observe` finds in a learner's worker is that worker's word only: learner code runs there and
can wrap or replace anything here. The grader checks it against outputs (:mod:`grader.grading.engine`).
"""

from __future__ import annotations

import contextlib
import hashlib
import sys

_MOVE: list = [False]  # what the call under way moves: False, True (every parameter) or a frozenset of paths
_WEIGHT: list = [None]  # a scalar (under jax.jit, traced) that scales the move: 0 moves nothing, 1 all
_DEPTH = [0]  # nesting of the hooked calls: only the outermost moves or observes
_OBSERVED: list = []  # while observing: {path: leaf} of each outermost init's parameters, in order
_OBSERVING = [False]
_SUBSTITUTE: list = [None]  # while substituting: {path: array} put in place of the initial parameters
_INSTALLED: set[str] = set()


def offsets(path: str, shape: tuple[int, ...]):
    """The fixed ``(a, b)`` of the leaf at ``path`` with ``shape``: float64 arrays of that shape."""
    import numpy as np

    seed = int.from_bytes(hashlib.sha256(f"{path}:{tuple(shape)}".encode()).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.5, 0.5, shape), rng.uniform(-0.25, 0.25, shape)


def move_leaf(path: str, leaf):
    """``leaf`` moved (unchanged if it is not a floating array, or not among the paths being moved)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    which, weight = _MOVE[0], _WEIGHT[0]
    dtype = getattr(leaf, "dtype", None)
    if not which or dtype is None or not jnp.issubdtype(dtype, jnp.floating) or (which is not True and path not in which):
        return leaf
    a, b = (x.astype(dtype) for x in offsets(path, tuple(leaf.shape)))
    if weight is not None or isinstance(leaf, jax.core.Tracer):
        return _mover()(leaf, jnp.asarray(1.0 if weight is None else weight, dtype), a, b)
    # A concrete leaf (an eager init) moves in NumPy: no program to compile per shape.
    leaf = np.asarray(leaf)
    return jnp.asarray(leaf + (leaf * a + b), dtype)


_MOVERS: list = []


def _mover():
    """``leaf + weight * (leaf * a + b)`` under ``jax.jit``: one operation in the traced program per leaf (its
    own trace is kept per shape), where writing it out would trace several each time."""
    if not _MOVERS:
        import jax

        _MOVERS.append(jax.jit(lambda leaf, weight, a, b: leaf + weight * (leaf * a + b)))
    return _MOVERS[0]


def path_of(keys) -> str:
    """A pytree path (JAX's keys, or NNX's names and indices) written ``a/b/kernel``."""
    return "/".join(str(getattr(k, "key", getattr(k, "name", getattr(k, "idx", k)))) for k in keys)


def _paths(tree) -> list:
    import jax

    return [(path_of(path), leaf) for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]]


def substitute_leaf(path: str, leaf):
    """The value :func:`substituting` gives the leaf at ``path`` (``params/a/b/kernel``), where it gives one of
    the leaf's shape; else ``leaf``."""
    values = _SUBSTITUTE[0]
    value = None if values is None else values.get(path)
    if value is None or tuple(value.shape) != tuple(getattr(leaf, "shape", ())) or not hasattr(leaf, "dtype"):
        return leaf
    import jax.numpy as jnp

    return jnp.asarray(value, leaf.dtype)


def _moved_variables(variables):
    """A linen variable collection with its ``params`` substituted (:func:`substituting`) and moved (the other
    collections as they are)."""
    import jax

    if not hasattr(variables, "get") or variables.get("params") is None:
        return variables

    def change(path, leaf):
        name = path_of(path)
        return move_leaf(name, substitute_leaf("params/" + name, leaf))

    params = jax.tree_util.tree_map_with_path(change, variables["params"])
    if type(variables) is dict:
        return {**variables, "params": params}
    return variables.copy({"params": params})  # a FrozenDict


def _observe_variables(variables) -> None:
    if hasattr(variables, "get") and variables.get("params") is not None:
        _OBSERVED.append({"params/" + path: leaf for path, leaf in _paths(variables["params"])})


@contextlib.contextmanager
def _outermost():
    _DEPTH[0] += 1
    try:
        yield _DEPTH[0] == 1
    finally:
        _DEPTH[0] -= 1


def _hook_linen() -> None:
    linen = sys.modules.get("flax.linen")
    if linen is None or "linen" in _INSTALLED:
        return
    _INSTALLED.add("linen")
    module = linen.Module

    def wrap(original, returns_pair: bool):
        def hooked(self, *args, **kwargs):
            with _outermost() as outermost:
                result = original(self, *args, **kwargs)
                if not outermost:
                    return result
                out, variables = result if returns_pair else (None, result)
                if _OBSERVING[0]:
                    _observe_variables(variables)
                variables = _moved_variables(variables)
                return (out, variables) if returns_pair else variables
        hooked.__wrapped__ = original
        return hooked

    module.init = wrap(module.init, False)
    module.lazy_init = wrap(module.lazy_init, False)
    module.init_with_output = wrap(module.init_with_output, True)


def _hook_nnx() -> None:
    pytreelib = sys.modules.get("flax.nnx.pytreelib")
    if pytreelib is None or "nnx" in _INSTALLED:
        return
    _INSTALLED.add("nnx")
    meta = pytreelib.PytreeMeta
    original = meta.__call__

    def hooked(cls, *args, **kwargs):
        with _outermost() as outermost:
            node = original(cls, *args, **kwargs)
            if outermost:
                _nnx_params(node)
            return node

    hooked.__wrapped__ = original
    meta.__call__ = hooked


def _nnx_params(node) -> None:
    """Move (or observe) the ``nnx.Param`` values of a module just built."""
    from flax import nnx

    if not isinstance(node, nnx.Module):
        return
    found = [(path_of(path), v) for path, v in nnx.iter_graph(node) if isinstance(v, nnx.Param)]
    if _OBSERVING[0] and found:
        _OBSERVED.append({"params/" + path: v.get_value() for path, v in found})
    if _SUBSTITUTE[0] is not None:
        for path, variable in found:
            variable.set_value(substitute_leaf("params/" + path, variable.get_value()))
    if _MOVE[0]:
        for path, variable in found:
            variable.set_value(move_leaf(path, variable.get_value()))



def install() -> None:
    """Hook Flax where it is imported (linen is imported here if it is not yet: the hooks must be in
    place when the entry first calls ``init``)."""
    import flax.linen  # noqa: F401

    _hook_linen()
    _hook_nnx()


@contextlib.contextmanager
def moving(which, weight=None):
    """Parameters made within are moved as ``which`` says (False, True, or a list of paths). With a
    ``weight`` (a scalar, traced under ``jax.jit``), every parameter moves by that fraction of its move:
    one traced program then serves the calls at the initial parameters (0) and at the moved ones (1)."""
    if which:
        install()
    saved = _MOVE[0], _WEIGHT[0]
    _MOVE[0] = which if isinstance(which, bool) else frozenset(which)
    _WEIGHT[0] = weight
    try:
        yield
    finally:
        _MOVE[0], _WEIGHT[0] = saved


@contextlib.contextmanager
def substituting(values: dict):
    """Parameters made within take the values ``values`` gives them (``{"params/a/b/kernel": array}``) in place
    of their initial ones, each where its shape is the leaf's (cast to the leaf's dtype); the others stay
    as made."""
    install()
    saved = _SUBSTITUTE[0]
    _SUBSTITUTE[0] = dict(values)
    try:
        yield
    finally:
        _SUBSTITUTE[0] = saved


def observe(call) -> dict | None:
    """``{path: leaf}`` of every parameter ``call()`` creates (paths as ``params/a/b/kernel``): the union of
    what each outermost ``init`` made (a file that builds its layer from two top-level modules made two
    trees; an init called again for the same module gives the same paths), or None where it creates none
    that Flax makes. ``call`` runs through: which init is its last is known only at its end."""
    install()
    _OBSERVED.clear()
    _OBSERVING[0] = True
    try:
        call()
    finally:
        _OBSERVING[0] = False
    merged: dict = {}
    for tree in _OBSERVED:
        merged.update(tree)
    return merged or None
