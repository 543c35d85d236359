"""The frameworks' settings for a stackcheck run, made before any framework starts a backend."""

from __future__ import annotations

import os


def framework_defaults(environ=os.environ) -> None:
    """Settings for the frameworks, made before any of them starts a backend (the user's win):

    - torch and JAX share one GPU, so JAX must not preallocate most of its memory;
    - XLA's GPU GEMM autotuning is off: it costs seconds per new matmul shape, and the suite
      compiles dozens (every drawn shape of a property test). Claims are about what is compiled
      and how it runs, not XLA's tuned peak; XLA_FLAGS naming the option keeps the user's choice.
    """
    environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    flags = environ.get("XLA_FLAGS", "")
    if "xla_gpu_autotune_level" not in flags:
        environ["XLA_FLAGS"] = f"{flags} --xla_gpu_autotune_level=0".strip()
