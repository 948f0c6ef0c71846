"""Checks the corpus of learner submissions in this folder without the grader.

Run from anywhere:  .venv/bin/python tests/submissions/verify.py [slug ...] [--only NAME ...]

For each problem (t5_relative_pos, rmsnorm, mini_t5_forward) and each file listed in
<slug>/manifest.toml, it calls the reference (solutions/<slug>/<slug>.py) and the submission
in this process on
  (a) the fixed examples of problems/<slug>/problem.toml,
  (b) a few hundred inputs drawn, derandomised, from problems/<slug>/strategies.py,
  (c) extra sizes: every bucket count and max_distance over a long sequence for the bucketing,
      mini T5 configurations that vary every size (vocab_size, d_model, num_heads, d_ff, the
      layer counts and the lengths, including length 1, one head, head_dim 1 and d_ff = 2 * d_model),
and checks with numpy, at the problem's tolerance (exactly for the buckets, with the float
neighbour accepted at whole-number cells as solutions/t5_relative_pos/grading.py does), that

  - every correct_* file agrees everywhere (outputs, and for Flax modules the parameter tree);
  - every other file differs somewhere (outputs or parameter tree), printing where;
  - a file marked `listed = "<id>"` agrees everywhere with the known-wrong variant <id> of solutions/<slug>/
    (it is the same mistake), and a file without `listed` agrees everywhere with no variant;
  - for mini T5, `part` is the first module, in order of completion, whose output is wrong when it
    runs alone on the reference's parameters and the reference's inputs for it (see first_wrong_part).

Exit status 0 when every claim of every manifest holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import time
import tomllib
import traceback
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))  # the pitfall variants import grader.problem.problems.load_module

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")

import flax.linen as nn  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from grader.problem import problems as grader_problems  # noqa: E402
from grader.sandbox import moved  # noqa: E402

MOVED = "__moved__"  # an input's key: run it with every parameter moved from its initial value

warnings.filterwarnings("ignore")

N_DRAWN = 300  # inputs drawn from each problem's strategy
_loaded = 0


def load(path: Path, name: str | None = None):
    """Imports a file as a fresh module (registered in sys.modules, as dataclasses need)."""
    global _loaded
    _loaded += 1
    name = name or f"_verify_{path.stem}_{_loaded}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def problem_meta(slug):
    return tomllib.loads((ROOT / "problems" / slug / "problem.toml").read_text())


def examples(slug):
    """The fixed examples' argument dicts, arrays as float32 numpy arrays."""
    meta = problem_meta(slug)
    out = []
    for ex in meta.get("examples", []):
        args = {}
        for key, kind in meta["args"].items():
            value = ex["args"][key]
            args[key] = np.asarray(value, dtype=np.float32) if kind.startswith("array") else value
        out.append(args)
    return out


def draw(slug, n=N_DRAWN):
    """n argument dicts drawn from the problem's strategy, derandomised (the same on every run)."""
    strategies = load(ROOT / "problems" / slug / "strategies.py")
    drawn = []

    @settings(max_examples=n, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(strategies.inputs())
    def collect(args):
        drawn.append(args)

    collect()
    return drawn


def close(got, expected, rtol, atol):
    """Boolean array: which values are within |got - expected| <= atol + rtol * |expected|."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.isfinite(got) & (np.abs(got - expected) <= atol + rtol * np.abs(expected))


def agrees(got, expected, rtol, atol):
    if isinstance(got, Exception):
        return False
    got = np.asarray(got)
    if got.shape != np.shape(expected):
        return False
    return bool(close(got, expected, rtol, atol).all())


def same_values(x, y, rtol, atol):
    """Two outputs of one mistake: same shape, NaN and infinities in the same places, the rest close."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape:
        return False
    finite = np.isfinite(x) & np.isfinite(y)
    if not np.array_equal(x[~finite], y[~finite], equal_nan=True):
        return False
    return bool(close(x[finite], y[finite], rtol, atol).all())


def call(fn, *args, **kwargs):
    try:
        return np.asarray(fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - a crash is a wrong answer here
        return e


def call_moved(fn, args: dict):
    """``call(fn, **args)``, with every parameter moved where ``args`` is marked MOVED."""
    args = dict(args)
    with moved.moving(args.pop(MOVED, False)):
        return call(fn, **args)


def no_number(x):
    """``x`` with NaN wherever it is not finite: where a mean square underflows to 0, x / sqrt(0) and
    x * rsqrt(0) write -inf or NaN for the same missing eps."""
    x = np.asarray(x, np.float64)
    return np.where(np.isfinite(x), x, np.nan)


def read_manifest(slug):
    manifest = tomllib.loads((HERE / slug / "manifest.toml").read_text())
    files = {p.stem for p in (HERE / slug).glob("*.py")}
    declared = grader_problems.load(ROOT, slug).variants("pitfalls")
    problems = []
    for name in sorted(files - manifest.keys()):
        problems.append(f"{slug}/{name}.py has no table in manifest.toml")
    for name in sorted(manifest.keys() - files):
        problems.append(f"manifest.toml has [{name}] but {slug}/{name}.py does not exist")
    for name, entry in manifest.items():
        correct = name.startswith("correct_")
        if correct != (entry.get("mistake", None) == ""):
            problems.append(f"[{name}]: correct_* files need mistake = \"\", others a sentence")
        if "listed" in entry and entry["listed"] not in declared:
            problems.append(f"[{name}]: listed = {entry['listed']!r} is no known-wrong variant of {slug}")
        if slug == "mini_t5_forward" and not correct and "part" not in entry:
            problems.append(f"[{name}]: mini_t5_forward needs a part")
    return manifest, problems


def variants(slug):
    """{id: path} of the known-wrong variants that import (they load the reference through the
    grader's load_module; one that fails to import is reported and left out)."""
    out = {}
    for path in grader_problems.load(ROOT, slug).variants("pitfalls").values():
        try:
            load(path)
        except Exception as e:  # noqa: BLE001
            print(f"  (variant {slug}/{path.stem} does not import, left out: {type(e).__name__}: {e})")
            continue
        out[path.stem] = path
    return out


class Report:
    def __init__(self):
        self.failures = []

    def fail(self, line):
        self.failures.append(line)
        print("  !! " + line)


def sizes_text(keys):
    return ", ".join(str(k) for k in keys)


# ----------------------------------------------------------------------------------------------
# t5_relative_pos
# ----------------------------------------------------------------------------------------------


def t5_inputs():
    """(label, args) pairs: the fixed examples, the drawn inputs, then a sweep of sizes."""
    items = [("example", a) for a in examples("t5_relative_pos")]
    items += [("drawn", a) for a in draw("t5_relative_pos")]
    # Every max_distance a generated input can have (E + 1 .. E + 12) and a few beyond, for
    # bucket counts on and off the strategy's menu, over T = 41: a (T, T) matrix holds every
    # offset size below T, so this covers all sizes up to 40 for each (N, D).
    for nb in (4, 6, 8, 10, 12, 14, 16, 20, 32, 64):
        e = nb // 4
        for md in sorted(set(range(e + 1, e + 13)) | {32, 128} - set(range(0, e + 1))):
            items.append(("sweep", {"seed": 0, "T": 41, "num_buckets": nb, "max_distance": md}))
    return items


def t5_compare_factory():
    grading = load(ROOT / "solutions" / "t5_relative_pos" / "grading.py")

    def ok(args, got, expected):
        """Exact, with the float neighbour accepted at whole-number cells (as the grader does)."""
        if isinstance(got, Exception):
            return False
        got = np.asarray(got)
        if got.shape != expected.shape:
            return False
        alt = grading.accept_also(args, expected)
        return bool(np.all((got == expected) | (got == alt)))

    def whole_cells(args):
        """(T * T,) bool: cells whose log position is mathematically a whole number (decided exactly)."""
        T, nb, md = int(args["T"]), int(args["num_buckets"]), int(args["max_distance"])
        me = nb // 4
        whole = np.array([d >= me and grading.exact_log_floor(d, nb, md)[1] for d in range(T)], dtype=bool)
        pos = np.arange(T)
        return whole[np.abs(pos[None, :] - pos[:, None])].reshape(-1)

    def same_mistake(args, got, variant):
        """Equal wherever the value is not a float-ambiguous whole number: at those cells any two
        implementations of one formula may floor differently (float32 against float64)."""
        if isinstance(got, Exception) or isinstance(variant, Exception):
            return isinstance(got, Exception) and isinstance(variant, Exception)
        got, variant = np.asarray(got), np.asarray(variant)
        if got.shape != variant.shape:
            return False
        return bool(np.all((got == variant) | whole_cells(args)))

    return ok, same_mistake


def per_size(bad_items, all_items, key):
    """'N=6: 11/14, N=8: 12/14' for the sweep: on how many max_distances each num_buckets differs."""
    totals, bad = {}, {}
    for a in all_items:
        totals[a[key]] = totals.get(a[key], 0) + 1
    for a in bad_items:
        bad[a[key]] = bad.get(a[key], 0) + 1
    return ", ".join(f"{key}={k}: {bad.get(k, 0)}/{totals[k]}" for k in sorted(totals))


def check_t5(only, report):
    slug = "t5_relative_pos"
    manifest, problems = read_manifest(slug)
    for p in problems:
        report.fail(p)
    ok, same_mistake = t5_compare_factory()
    reference = load(ROOT / "solutions" / slug / f"{slug}.py")
    items = t5_inputs()
    expected = [np.asarray(reference.t5_relative_pos(**a)) for _, a in items]
    print(f"\n== {slug}: {len(items)} inputs ({sum(l == 'example' for l, _ in items)} examples, "
          f"{sum(l == 'drawn' for l, _ in items)} drawn, {sum(l == 'sweep' for l, _ in items)} sweep cells of T=41)")

    def outputs(fn):
        return [call(fn, **a) for _, a in items]

    def same(outs_a, outs_b):
        return all(same_mistake(a, x, y) for (_, a), x, y in zip(items, outs_a, outs_b))

    variant_outs = {vid: outputs(load(path).t5_relative_pos) for vid, path in variants(slug).items()}

    for name, entry in manifest.items():
        if only and name not in only:
            continue
        sub = load(HERE / slug / f"{name}.py")
        outs = outputs(sub.t5_relative_pos)
        bad = [i for i, ((_, a), g, e) in enumerate(zip(items, outs, expected)) if not ok(a, g, e)]
        by_label = {lab: sum(1 for i in bad if items[i][0] == lab) for lab in ("example", "drawn", "sweep")}
        totals = {lab: sum(1 for l, _ in items if l == lab) for lab in ("example", "drawn", "sweep")}
        nbs = sorted({items[i][1]["num_buckets"] for i in bad})
        combos = [(items[i][1]["num_buckets"], items[i][1]["max_distance"]) for i in bad if items[i][0] == "sweep"]
        same_as = [vid for vid, vo in variant_outs.items() if same(outs, vo)]
        errors = sum(isinstance(o, Exception) for o in outs)
        line = (f"  {name}: differs on examples {by_label['example']}/{totals['example']}, drawn "
                f"{by_label['drawn']}/{totals['drawn']}, sweep {by_label['sweep']}/{totals['sweep']}"
                + (f"; errors {errors}" if errors else "")
                + (f"; num_buckets where it differs: {sizes_text(nbs)}" if bad else "")
                + (f"; same mistake as variant(s) {same_as}" if same_as else ""))
        print(line)
        if bad and combos and len(combos) < totals["sweep"]:
            sweep = [a for lab, a in items if lab == "sweep"]
            print("      sweep, max_distances (of those tried) where it differs, by num_buckets: "
                  + per_size([items[i][1] for i in bad if items[i][0] == "sweep"], sweep, "num_buckets"))
        check_claims(report, slug, name, entry, correct=name.startswith("correct_"), n_bad=len(bad),
                     params_differ=False, same_as=same_as)
    return manifest


def check_claims(report, slug, name, entry, correct, n_bad, params_differ, same_as):
    wrong = n_bad > 0 or params_differ
    if correct and wrong:
        report.fail(f"{slug}/{name}: a correct_* file differs from the reference")
    if not correct and not wrong:
        report.fail(f"{slug}/{name}: no input shows the mistake (invisible on every input tried)")
    listed = entry.get("listed")
    if listed and listed not in same_as:
        report.fail(f"{slug}/{name}: listed = {listed!r}, but that variant's outputs differ from this file's")
    if not correct and not listed and same_as:
        report.fail(f"{slug}/{name}: not listed, but it is the same mistake as variant(s) {same_as}")


# ----------------------------------------------------------------------------------------------
# rmsnorm
# ----------------------------------------------------------------------------------------------


def param_shapes(tree, prefix=""):
    """{path: shape} for a nested dict of arrays."""
    out = {}
    for key, value in tree.items():
        path = f"{prefix}/{key}" if prefix else str(key)
        if isinstance(value, dict) or hasattr(value, "items"):
            out.update(param_shapes(dict(value), path))
        else:
            out[path] = tuple(np.shape(value))
    return out


def rmsnorm_params(module, x):
    """The parameter paths and shapes the submission's module creates for input `x`, or None."""
    cls = getattr(module, "RMSNorm", None)
    if cls is None:
        return None
    if isinstance(cls, type) and issubclass(cls, nn.Module):
        variables = cls(eps=1e-6).init(jax.random.PRNGKey(0), x)
        return param_shapes(dict(variables.get("params", {})))
    try:
        from flax import nnx

        if isinstance(cls, type) and issubclass(cls, nnx.Module):
            model = cls(x.shape[-1], eps=1e-6, rngs=nnx.Rngs(0))
            state = nnx.state(model, nnx.Param)
            flat = {"/".join(str(k) for k in path): tuple(np.shape(v.value if hasattr(v, "value") else v))
                    for path, v in nnx.to_flat_state(state)}
            return flat
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    return None


# bfloat16 keeps 8 significant bits: two bfloat16 computations agree to about 2**-7 relative
SAME_MISTAKE_RTOL = {"bfloat16": 2.0**-6}


def check_rmsnorm(only, report):
    slug = "rmsnorm"
    meta = problem_meta(slug)
    rtol, atol = meta["tolerance"]["rtol"], meta["tolerance"]["atol"]
    manifest, problems = read_manifest(slug)
    for p in problems:
        report.fail(p)
    reference = load(ROOT / "solutions" / slug / f"{slug}.py")
    items = [("example", a) for a in examples(slug)] + [("drawn", a) for a in draw(slug)]
    # Each input also with the parameters moved from their initial values, as the grader runs it: a gain of
    # ones and a bias of zeros show only there (grader.sandbox.moved).
    items += [(f"{label}, moved", {**a, MOVED: True}) for label, a in items]
    expected = [np.asarray(call_moved(reference.rmsnorm, a)) for _, a in items]
    probe_shapes = [(2, 3), (4,), (3, 2, 4)]
    ref_params = {s: rmsnorm_params(reference, jnp.ones(s, jnp.float32)) for s in probe_shapes}
    print(f"\n== {slug}: {len(items)} inputs; parameter tree of the reference for x (2, 3): {ref_params[(2, 3)]}")

    def outputs(fn):
        return [call_moved(fn, a) for _, a in items]

    def same(outs_a, outs_b, vid):
        """Close at the problem's tolerance, NaN where the variant has NaN; a variant whose mistake
        is reduced precision is matched at that precision (two ways of rounding differ in the digits
        the lower precision loses)."""
        r = SAME_MISTAKE_RTOL.get(vid, rtol)
        for x, y in zip(outs_a, outs_b):
            if isinstance(x, Exception) or isinstance(y, Exception):
                if not (isinstance(x, Exception) and isinstance(y, Exception)):
                    return False
                continue
            if not same_values(no_number(x), no_number(y), r, atol):
                return False
        if vid in SAME_MISTAKE_RTOL:
            # loosely close is not enough (a correct file is too): wrong on (nearly) the same inputs,
            # "nearly" because a value that one rounding happens to get right the other may not
            ref_bad = np.array([not agrees(x, e, rtol, atol) for x, e in zip(outs_a, expected)])
            var_bad = np.array([not agrees(y, e, rtol, atol) for y, e in zip(outs_b, expected)])
            union = (ref_bad | var_bad).sum()
            return bool(union) and (ref_bad & var_bad).sum() / union >= 0.9
        return True

    variant_outs = {vid: outputs(load(path).rmsnorm) for vid, path in variants(slug).items()}

    for name, entry in manifest.items():
        if only and name not in only:
            continue
        sub = load(HERE / slug / f"{name}.py")
        outs = outputs(sub.rmsnorm)
        bad = [i for i, (g, e) in enumerate(zip(outs, expected)) if not agrees(g, e, rtol, atol)]
        params = {s: rmsnorm_params(sub, jnp.ones(s, jnp.float32)) for s in probe_shapes}
        params_differ = any(params[s] is not None and params[s] != ref_params[s] for s in probe_shapes)
        same_as = [vid for vid, vo in variant_outs.items() if same(outs, vo, vid)]
        kinds = {}
        for i in bad:
            a = items[i][1]
            kinds.setdefault(f"rank {np.ndim(a['x'])}", 0)
            kinds[f"rank {np.ndim(a['x'])}"] += 1
        worst = ""
        if bad:
            i = bad[0]
            g, e = outs[i], expected[i]
            if isinstance(g, Exception):
                worst = f"; first: {type(g).__name__}"
            else:
                a = items[i][1]
                worst = (f"; first: x shape {np.shape(a['x'])}, eps {a['eps']:.3g}, "
                         f"max |diff| {np.nanmax(np.abs(np.asarray(g, np.float64) - e)) if np.shape(g) == e.shape else 'shape'}"
                         f", NaN: {bool(np.isnan(np.asarray(g, np.float64)).any()) if not isinstance(g, Exception) else '-'}")
        line = (f"  {name}: differs on {len(bad)}/{len(items)} inputs "
                f"(examples {sum(1 for i in bad if items[i][0] == 'example')}/{len(examples(slug))})"
                + (f" [{', '.join(f'{k}: {v}' for k, v in sorted(kinds.items()))}]" if kinds else "")
                + worst
                + (f"; parameter tree differs: {params[(2, 3)]}" if params_differ else "")
                + ("; parameter tree not checked (no linen/NNX RMSNorm)" if params[(2, 3)] is None else "")
                + (f"; same mistake as variant(s) {same_as}" if same_as else ""))
        print(line)
        check_claims(report, slug, name, entry, correct=name.startswith("correct_"), n_bad=len(bad),
                     params_differ=params_differ, same_as=same_as)
    return manifest


# ----------------------------------------------------------------------------------------------
# mini_t5_forward
# ----------------------------------------------------------------------------------------------

# (seed, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers, T_enc, T_dec)
EXTRA_CONFIGS = (
    (2, 16, 8, 1, 16, 3, 1, 2, 6),  # the strategy's earlier third shape: one head of 8
    (3, 11, 12, 3, 20, 1, 1, 1, 1),  # both lengths 1
    (4, 11, 12, 3, 20, 2, 3, 6, 4),
    (5, 11, 12, 6, 20, 3, 2, 3, 5),  # head_dim 2
    (6, 11, 12, 12, 24, 1, 2, 4, 3),  # head_dim 1, d_ff = 2 * d_model
    (7, 13, 12, 1, 24, 2, 1, 5, 6),  # one head, d_ff = 2 * d_model
    (8, 11, 12, 4, 20, 3, 3, 2, 2),
    (9, 7, 6, 2, 10, 2, 2, 3, 1),  # decoder length 1
)
PER_EXTRA_CONFIG = 25  # random id pairs per extra configuration
# configurations on which first_wrong_part runs (the first one where the output differs is used too)
PART_CONFIGS = ((0, 16, 8, 2, 16, 2, 2, 4, 3), (4, 11, 12, 3, 20, 2, 3, 6, 4))


def t5_configs():
    """{config: [(enc_ids, dec_ids), ...]}: drawn inputs by shape, then the extra configurations."""
    by_config = {}
    for args in examples("mini_t5_forward") + draw("mini_t5_forward"):
        enc, dec = np.asarray(args["x_enc_ids"]), np.asarray(args["x_dec_ids"])
        key = (args["seed"], args["vocab_size"], args["d_model"], args["num_heads"], args["d_ff"],
               args["num_enc_layers"], args["num_dec_layers"], len(enc), len(dec))
        by_config.setdefault(key, []).append((enc.astype(np.int32), dec.astype(np.int32)))
    rng = np.random.default_rng(0)
    for cfg in EXTRA_CONFIGS:
        if cfg in by_config:
            continue
        _, V, *_, T_enc, T_dec = cfg
        by_config[cfg] = [(rng.integers(0, V, T_enc).astype(np.int32), rng.integers(0, V, T_dec).astype(np.int32))
                          for _ in range(PER_EXTRA_CONFIG)]
    return by_config


def model_class(module):
    """The MiniT5 class the module's entry builds (a variant patches its reference's)."""
    return getattr(getattr(module, "reference", module), "MiniT5")


def batch_logits(module, cfg, pairs):
    """(len(pairs), T_dec, V) logits of the module's MiniT5 with its own parameters, or the exception."""
    seed, V, D, H, F, n_enc, n_dec, _, _ = cfg
    try:
        model = model_class(module)(V, D, H, F, n_enc, n_dec)
        placeholder = jnp.zeros((2,), jnp.int32)
        variables = model.init(jax.random.PRNGKey(seed), placeholder, placeholder)
        fn = jax.jit(jax.vmap(lambda e, d: model.apply(variables, e, d)))
        enc = jnp.asarray(np.stack([e for e, _ in pairs]))
        dec = jnp.asarray(np.stack([d for _, d in pairs]))
        return np.asarray(fn(enc, dec)), variables
    except Exception as e:  # noqa: BLE001
        return e, None


def capture(module, cfg, enc, dec):
    """Runs the reference eagerly and records every module call in apply mode, in order of completion.

    Returns (params, calls) with calls a list of dicts: path, cls, module (the class's defining
    module name), fields, args, kwargs, output.
    """
    seed, V, D, H, F, n_enc, n_dec, _, _ = cfg
    model = module.MiniT5(V, D, H, F, n_enc, n_dec)
    placeholder = jnp.zeros((2,), jnp.int32)
    variables = model.init(jax.random.PRNGKey(seed), placeholder, placeholder)
    calls = []

    def interceptor(next_fun, args, kwargs, context):
        out = next_fun(*args, **kwargs)
        mod = context.module
        if context.method_name == "__call__" and not mod.is_initializing():
            fields = {f.name: getattr(mod, f.name) for f in dataclasses.fields(mod)
                      if f.name not in ("parent", "name")}
            calls.append(dict(path="/".join(mod.path), cls=type(mod).__name__, module=type(mod).__module__,
                              fields=fields, args=args, kwargs=kwargs, output=np.asarray(out)))
        return out

    with nn.intercept_methods(interceptor):
        model.apply(variables, jnp.asarray(enc), jnp.asarray(dec))
    return variables["params"], calls


def subtree(params, path):
    node = params
    for part in [p for p in path.split("/") if p]:
        node = node[part]
    return node


def first_wrong_part(sub, captured, rtol, atol):
    """The first captured call whose output the submission's class of the same name gets wrong.

    Each call runs alone: the submission's class, built with the reference module's fields, applied
    to the reference's parameters for that path and the reference's inputs for that call. Flax's own
    modules (Dense, Embed) are the same on both sides and skipped. Returns (path, why) or (None, None).
    """
    params, calls = captured
    for c in calls:
        if c["module"].startswith("flax"):
            continue
        cls = getattr(sub, c["cls"], None)
        if cls is None:
            return c["path"], f"the submission has no class {c['cls']}"
        try:
            got = np.asarray(cls(**c["fields"]).apply({"params": subtree(params, c["path"])}, *c["args"], **c["kwargs"]))
        except Exception as e:  # noqa: BLE001
            return c["path"], f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
        if got.shape != c["output"].shape:
            return c["path"], f"shape {got.shape}, expected {c['output'].shape}"
        good = close(got, c["output"], rtol, atol)
        if not good.all():
            err = np.max(np.abs(got.astype(np.float64) - c["output"]))
            return c["path"], f"{int((~good).sum())} of {good.size} values differ, max |diff| {err:.3g}"
    return None, None


def check_mini_t5(only, report):
    slug = "mini_t5_forward"
    meta = problem_meta(slug)
    rtol, atol = meta["tolerance"]["rtol"], meta["tolerance"]["atol"]
    manifest, problems = read_manifest(slug)
    for p in problems:
        report.fail(p)
    reference = load(ROOT / "solutions" / slug / f"{slug}.py")
    configs = t5_configs()
    t0 = time.time()
    ref_out = {cfg: batch_logits(reference, cfg, pairs) for cfg, pairs in configs.items()}
    ref_params = {cfg: param_shapes(dict(v[1]["params"])) for cfg, v in ref_out.items()}
    ref_out = {cfg: v[0] for cfg, v in ref_out.items()}
    n_inputs = sum(len(p) for p in configs.values())
    print(f"\n== {slug}: {n_inputs} inputs over {len(configs)} configurations "
          f"(seed, V, D, H, d_ff, enc layers, dec layers, T_enc, T_dec); reference in {time.time() - t0:.0f}s")
    for cfg, pairs in configs.items():
        print(f"     {cfg}: {len(pairs)} inputs")

    # the entry itself, on the fixed examples, must give what the batched path gives
    fixed = examples(slug)
    fixed_expected = [np.asarray(reference.mini_t5_forward(**a)) for a in fixed]
    for a, e in zip(fixed, fixed_expected):
        cfg = (a["seed"], a["vocab_size"], a["d_model"], a["num_heads"], a["d_ff"], a["num_enc_layers"],
               a["num_dec_layers"], len(a["x_enc_ids"]), len(a["x_dec_ids"]))
        idx = next(i for i, (en, de) in enumerate(configs[cfg])
                   if np.array_equal(en, a["x_enc_ids"].astype(np.int32)) and np.array_equal(de, a["x_dec_ids"].astype(np.int32)))
        assert agrees(e, ref_out[cfg][idx].reshape(-1), rtol / 10, atol / 10), "batched path != entry"

    def differing(outs):
        """{config: number of inputs whose logits differ} (all of them when the call failed)."""
        res = {}
        for cfg, pairs in configs.items():
            got = outs[cfg]
            if isinstance(got, Exception) or got.shape != ref_out[cfg].shape:
                res[cfg] = len(pairs)
                continue
            ok = close(got, ref_out[cfg], rtol, atol).reshape(len(pairs), -1).all(axis=1)
            if (~ok).sum():
                res[cfg] = int((~ok).sum())
        return res

    def same(outs_a, outs_b):
        for cfg in configs:
            a, b = outs_a[cfg], outs_b[cfg]
            if isinstance(a, Exception) or isinstance(b, Exception):
                if not (isinstance(a, Exception) and isinstance(b, Exception)):
                    return False
                continue
            if not same_values(a, b, rtol, atol):
                return False
        return True

    t0 = time.time()
    variant_outs = {}
    for vid, path in variants(slug).items():
        mod = load(path)
        variant_outs[vid] = {cfg: batch_logits(mod, cfg, pairs)[0] for cfg, pairs in configs.items()}
    print(f"  ({len(variant_outs)} variants run in {time.time() - t0:.0f}s)")

    captures = {}

    def captured(cfg):
        if cfg not in captures:
            enc, dec = configs[cfg][0]
            captures[cfg] = capture(reference, cfg, enc, dec)
        return captures[cfg]

    for name, entry in manifest.items():
        if only and name not in only:
            continue
        t0 = time.time()
        sub = load(HERE / slug / f"{name}.py")
        results = {cfg: batch_logits(sub, cfg, pairs) for cfg, pairs in configs.items()}
        outs = {cfg: r[0] for cfg, r in results.items()}
        sub_params = {cfg: param_shapes(dict(r[1]["params"])) if r[1] is not None else None
                      for cfg, r in results.items()}
        params_differ = [cfg for cfg in configs if sub_params[cfg] != ref_params[cfg]]
        diff = differing(outs)
        # the entry itself on the fixed examples
        entry_bad = sum(not agrees(call(sub.mini_t5_forward, **a), e, rtol, atol) for a, e in zip(fixed, fixed_expected))
        same_as = [vid for vid, vo in variant_outs.items() if same(outs, vo)]
        errors = [cfg for cfg in configs if isinstance(outs[cfg], Exception)]
        # first wrong part: on PART_CONFIGS, and on the first configuration where the output differs
        part_cfgs = list(PART_CONFIGS)
        if diff and not any(c in diff for c in part_cfgs):
            part_cfgs.append(next(iter(diff)))
        parts = {cfg: first_wrong_part(sub, captured(cfg), rtol, atol) for cfg in part_cfgs}
        found = [p for p, _ in parts.values() if p is not None]
        print(f"  {name}: differs on {sum(diff.values())}/{n_inputs} inputs, in {len(diff)}/{len(configs)} "
              f"configurations; fixed examples wrong through the entry: {entry_bad}/{len(fixed)}"
              + (f"; errors in {len(errors)} configurations" if errors else "")
              + (f"; parameter tree differs in {len(params_differ)} configurations" if params_differ else "")
              + (f"; same mistake as variant(s) {same_as}" if same_as else "")
              + f"  [{time.time() - t0:.0f}s]")
        if diff and len(diff) < len(configs):
            print(f"      differs only on: {sizes_text(sorted(diff))}")
            print(f"      agrees on:       {sizes_text(sorted(c for c in configs if c not in diff))}")
        for cfg, (path, why) in parts.items():
            print(f"      first wrong part on {cfg}: {path!r}" + (f" ({why})" if why else ""))
        correct = name.startswith("correct_")
        check_claims(report, slug, name, entry, correct=correct, n_bad=sum(diff.values()),
                     params_differ=bool(params_differ), same_as=same_as)
        if correct:
            if found:
                report.fail(f"{slug}/{name}: a correct file, but part {found[0]!r} differs when run alone")
            continue
        claimed = entry.get("part")
        # the claim must hold wherever the output differs; where the output agrees no part may be wrong
        for cfg, (path, _) in parts.items():
            visible = cfg in diff or cfg in params_differ
            if visible and path != claimed:
                report.fail(f"{slug}/{name}: part = {claimed!r}, but on {cfg} the first wrong part is {path!r}")
        if not found and diff:
            report.fail(f"{slug}/{name}: the output differs but no part is wrong when run alone")
    return manifest


# ----------------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slugs", nargs="*", default=["t5_relative_pos", "rmsnorm", "mini_t5_forward"])
    parser.add_argument("--only", nargs="*", default=[], help="submission names to check (default: all)")
    ns = parser.parse_args(argv)
    report = Report()
    checks = {"t5_relative_pos": check_t5, "rmsnorm": check_rmsnorm, "mini_t5_forward": check_mini_t5}
    t0 = time.time()
    counts = {}
    for slug in ns.slugs:
        manifest = checks[slug](set(ns.only), report)
        n_correct = sum(1 for k in manifest if k.startswith("correct_"))
        counts[slug] = (len(manifest) - n_correct, n_correct, sum(1 for v in manifest.values() if "listed" in v))
    print(f"\n== summary ({time.time() - t0:.0f}s)")
    for slug, (wrong, correct, listed) in counts.items():
        print(f"  {slug}: {wrong} wrong ({listed} listed, {wrong - listed} unlisted), {correct} correct")
    if report.failures:
        print(f"  {len(report.failures)} claim(s) do not hold:")
        for line in report.failures:
            print("   - " + line)
        return 1
    print("  every claim of every manifest holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
