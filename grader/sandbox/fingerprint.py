"""The one fingerprint of everything a cached output or a reused process depends on besides its own
sources (computed without importing JAX or NumPy: the command uses it before it forks its zygote)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import sys
from pathlib import Path

from grader.sandbox import config

PACKAGES = ("jax", "jaxlib", "flax", "numpy", "hypothesis")
# Environment variables that can change what JAX, XLA, Flax or the interpreter compute.
ENV_PREFIXES = ("JAX_", "XLA_", "FLAX_", "TF_", "LD_", "CUDA", "NVIDIA", "ROCR_", "HIP_", "TPU_", "OMP_",
                "OPENBLAS_", "MKL_", "PYTHONHASHSEED", "PYTHONPATH")
# Matched by a prefix above but changing no numerics: log verbosity, and a cloud metadata lookup that
# importing JAX turns off in its own process's environment (so a process that has imported JAX would
# otherwise see another fingerprint than one that has not).
ENV_IGNORED = frozenset(["TF_CPP_MIN_LOG_LEVEL", "TPU_SKIP_MDS_QUERY"])


@functools.cache
def fingerprint() -> str:
    """Everything a cached or reused result depends on besides its own sources: the grader's source,
    the library versions and accelerator plugins, the compile flags and matmul precision, the
    environment variables that change numerics, and the platform. Computed without importing JAX."""
    h = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for source in sorted(package.rglob("*.py")):
        h.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
    dists = installed()
    versions = {name: dists.get(name, "none") for name in PACKAGES}
    plugins = sorted(f"{name}={v}" for name, v in dists.items() if name.startswith(("jax-cuda", "jax-rocm", "libtpu")))
    # The workers' environment, and PYTHONPATH, which no worker gets but a zygote forked from the command
    # imported its modules through.
    env = config.worker_env()
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    h.update(json.dumps({"versions": versions, "plugins": plugins, "precision": config.MATMUL_PRECISION,
                         "env": {k: v for k, v in sorted(env.items()) if k.startswith(ENV_PREFIXES) and k not in ENV_IGNORED},
                         "platform": [sys.platform, platform.machine(), sys.version]}).encode())
    return h.hexdigest()




def installed() -> dict[str, str]:
    """Name -> version of the distributions on ``sys.path``, from their ``.dist-info`` folders' names
    (a directory listing, where importlib.metadata would cost the command tens of milliseconds)."""
    found: dict[str, str] = {}
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist, _, version = name.removesuffix(".dist-info").partition("-")
                found.setdefault(dist.lower().replace("_", "-"), version)
    return found
