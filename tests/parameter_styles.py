"""Learner files that get a parameter wrong, in every style a learner writes (tests/grading/test_parameters.py).

Each is written out from a file of the project when a test asks for it, so it follows the reference: the
reference or a correct alternative with one change (a parameter ignored, dropped, added or declared out of
order), or a short file of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Style:
    """``base`` (a file of the project) with each ``(old, new)`` of ``replace`` applied once, after
    ``prefix``; or ``source`` alone."""

    doc: str
    base: str = ""
    replace: tuple[tuple[str, str], ...] = ()
    prefix: str = ""
    source: str = ""

    def text(self) -> str:
        if self.source:
            return f'"""{self.doc}"""\n{self.source}'
        text = (ROOT / self.base).read_text()
        for old, new in self.replace:
            assert text.count(old) == 1, (self.base, old)
            text = text.replace(old, new)
        return f'"""{self.doc}"""\n{self.prefix}\n{text}'


NO_BIASES = ('''        self.query = nn.Dense(self.d_model)
        self.key = nn.Dense(self.d_model)
        self.value = nn.Dense(self.d_model)
        self.out = nn.Dense(self.d_model)''', '''        self.query = nn.Dense(self.d_model, use_bias=False)
        self.key = nn.Dense(self.d_model, use_bias=False)
        self.value = nn.Dense(self.d_model, use_bias=False)
        self.out = nn.Dense(self.d_model, use_bias=False)''')
DENSE_WITHOUT_BIAS = ('    return x @ p["kernel"] + p["bias"]', '    return x @ p["kernel"]  # the bias forgotten')

# Rewrites the grader's own helpers in the worker, so that the tree it reports leaves beta out and nothing
# is moved: what a worker says about itself decides nothing.
HIDE_BETA = '''
try:
    import grader.sandbox.moved as _moved
    import grader.sandbox.trees as _worker
except ImportError:
    _moved = _worker = None


def _without_beta(tree):
    return {k: v for k, v in tree.items() if "beta" not in k} if isinstance(tree, dict) else tree


if _worker is not None:
    _flat = _worker.flat_tree
    _worker.flat_tree = lambda tree: _without_beta(_flat(tree))
if _moved is not None:
    _observe = _moved.observe
    _moved.observe = lambda call: _without_beta(_observe(call))
    _moved.move_leaf = lambda path, leaf: leaf
'''

STYLES = {
    "rmsnorm_stub_ignores_gamma": Style(
        "rmsnorm in the stub's tree: gamma is declared and never used (right only while gamma is ones).",
        "solutions/rmsnorm/rmsnorm.py",
        (("        return gamma * (x / jnp.sqrt(mean_square + self.eps))  # (..., D)",
          "        return x / jnp.sqrt(mean_square + self.eps)  # (..., D): gamma forgotten"),)),
    "rmsnorm_numpy_own_ones": Style(
        "rmsnorm in NumPy beside a module that declares gamma; the arithmetic uses ones of its own.",
        "solutions/rmsnorm/alternatives/numpy_float64.py",
        (('    gamma = np.asarray(params["gamma"], dtype=np.float64)  # (D,)',
          "    gamma = np.ones(x.shape[-1])  # (D,): not the parameter"),)),
    "rmsnorm_nnx_ignores_gamma": Style(
        "rmsnorm as an NNX module whose gamma is an nnx.Param that __call__ never reads.",
        "solutions/rmsnorm/alternatives/nnx.py",
        (("        return self.gamma[...] * x / jnp.sqrt(mean_square + self.eps)  # (..., D)",
          "        return x / jnp.sqrt(mean_square + self.eps)  # (..., D): gamma forgotten"),)),
    "rmsnorm_no_parameters": Style(
        "rmsnorm with no parameters at all: plain jax.numpy, no gain (right only while gamma is ones).",
        source='''
import jax.numpy as jnp


def rmsnorm(seed, x, eps):
    x = jnp.asarray(x, jnp.float32)  # (..., D)
    return (x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)).reshape(-1)  # (N,)
'''),
    "rmsnorm_hides_extra_beta": Style(
        "rmsnorm with an extra learned shift beta (zeros) that also hides beta from the tree its worker reports.",
        "tests/submissions/rmsnorm/extra_beta.py", prefix=HIDE_BETA),
    "shaw_numpy_forgets_biases": Style(
        "Shaw attention in NumPy from the stub's tree; the four projections' biases (zeros) are never added.",
        "solutions/shaw_relative_attention/alternatives/float64_numpy_loops.py", (DENSE_WITHOUT_BIAS,)),
    "shaw_spec_tree_without_biases": Style(
        "Shaw attention in NumPy beside a spec module whose four projections have no bias at all.",
        "solutions/shaw_relative_attention/alternatives/float64_numpy_loops.py", (NO_BIASES, DENSE_WITHOUT_BIAS)),
    "txl_compact_v_before_u": Style(
        "Transformer-XL attention in @nn.compact, right in every computation, but v is declared before u.",
        "solutions/transformer_xl_attention/alternatives/compact_loop_heads.py",
        (('''        u = self.param("u", nn.initializers.normal(stddev=1.0), (H, dh))  # (H, dh)
        v_bias = self.param("v", nn.initializers.normal(stddev=1.0), (H, dh))  # (H, dh)''',
          '''        v_bias = self.param("v", nn.initializers.normal(stddev=1.0), (H, dh))  # (H, dh)
        u = self.param("u", nn.initializers.normal(stddev=1.0), (H, dh))  # (H, dh)'''),)),
    "txl_spec_extra_pos_bias": Style(
        "Transformer-XL attention in NumPy beside a spec module whose pos_proj has a bias (never used).",
        "solutions/transformer_xl_attention/alternatives/numpy_float64_loops.py",
        (("        self.pos_proj = nn.Dense(self.d_model, use_bias=False)", "        self.pos_proj = nn.Dense(self.d_model)"),)),
    "mini_t5_rmsnorm_ignores_gamma": Style(
        "mini_t5_forward in the stub's tree, whose RMSNorm declares gamma and never multiplies by it.",
        "solutions/mini_t5_forward/mini_t5_forward.py",
        (("        return self.gamma * x * jax.lax.rsqrt(mean_square + self.eps)",
          "        return x * jax.lax.rsqrt(mean_square + self.eps)"),)),
}


def write(name: str, folder: Path) -> Path:
    """The learner file ``name`` written into ``folder``."""
    path = folder / f"{name}.py"
    path.write_text(STYLES[name].text())
    return path
