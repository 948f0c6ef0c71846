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


# What of the grader's environment a worker (and a zygote, which forks them) starts with: what the
# interpreter, JAX, XLA, Flax, the numeric libraries and an accelerator read, the locale, and the
# sandbox's own settings (and the cache folder, which tells whose run a process is, as `ps e` shows).
# Nothing else: not an instructor's tokens, not the variables that tell the grader a class is graded or
# what it hides (learner code must not learn that a class is being graded).
ENV_KEPT = frozenset(["PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "PYTHONHASHSEED", "PYTHONIOENCODING",
                      "GRADE_WARM_SECONDS", "GRADE_LEARNER_USER", "GRADE_CACHE_DIR"])
ENV_KEPT_PREFIXES = ("LC_", "JAX_", "XLA_", "FLAX_", "TF_", "LD_LIBRARY_PATH", "CUDA", "NVIDIA", "ROCR_", "HIP_",
                     "TPU_", "OMP_", "OPENBLAS_", "MKL_", "GOTO_", "NCCL_")


def worker_env() -> dict:
    """The environment of every worker (and of a zygote, which forks them): the grader's, allow-listed."""
    flags = os.environ.get("XLA_FLAGS", "")
    kept = {k: v for k, v in os.environ.items() if k in ENV_KEPT or k.startswith(ENV_KEPT_PREFIXES)}
    return dict(kept, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="3",
                XLA_FLAGS=flags if COMPILE_FLAGS in flags else f"{flags} {COMPILE_FLAGS}".strip())
