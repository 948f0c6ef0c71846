"""How every worker's JAX is set up: compile flags, matmul precision, the environment it starts with."""

from __future__ import annotations

import os

# XLA's CPU compiler spends most of a kata's grading time optimising programs that then run for
# microseconds: without LLVM optimisation and with the classic (non-MLIR) fusion emitters, compiling
# is several times faster; and code generated as one piece rather than split for parallel threads
# compiles in about half the time again (the two workers already keep both cores busy). Numerics stay
# IEEE (no fast math); both sides of a comparison use the same flags. They only concern the CPU backend.
COMPILE_FLAGS = ("--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false "
                 "--xla_cpu_parallel_codegen_split_count=1")
MATMUL_PRECISION = "highest"  # float32 matmuls on GPU otherwise default to reduced precision


def worker_env() -> dict:
    """The environment of every worker (and of a zygote, which forks them)."""
    flags = os.environ.get("XLA_FLAGS", "")
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="3",
                XLA_FLAGS=flags if COMPILE_FLAGS in flags else f"{flags} {COMPILE_FLAGS}".strip())
