"""The matmul precision every test runs with (numerics policy): TF32 off, JAX precision 'highest'.

Tests marked ``precision`` are about these settings and run with the frameworks' own.
"""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def pinned(torch=None, jax=None):
    """Pin the precision of the given framework modules (None: not loaded, left alone) inside the
    block; yields a function that reads the settings in force, for the §14.4 fingerprint."""
    restore = []
    if torch is not None:
        saved = (
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
            torch.get_float32_matmul_precision(),
        )
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")

        def undo_torch():
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[:2]
            torch.set_float32_matmul_precision(saved[2])

        restore.append(undo_torch)
    if jax is not None:
        saved_jax = jax.config.jax_default_matmul_precision
        jax.config.update("jax_default_matmul_precision", "highest")
        restore.append(lambda: jax.config.update("jax_default_matmul_precision", saved_jax))
    try:
        yield lambda: read(torch, jax)
    finally:
        for undo in reversed(restore):
            undo()


@contextlib.contextmanager
def torch_tf32(torch, enabled: bool):
    """fp32 matmuls on Tensor Cores in TF32 (10-bit mantissa inputs) or in full float32, inside the
    block only (MC13, for tests marked ``precision``)."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision()
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.set_float32_matmul_precision("high" if enabled else "highest")
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved[0]
        torch.set_float32_matmul_precision(saved[1])


def read(torch=None, jax=None) -> dict:
    settings = {}
    if torch is not None:
        settings["torch.backends.cuda.matmul.allow_tf32"] = torch.backends.cuda.matmul.allow_tf32
        settings["torch.backends.cudnn.allow_tf32"] = torch.backends.cudnn.allow_tf32
        settings["torch.float32_matmul_precision"] = torch.get_float32_matmul_precision()
    if jax is not None:
        settings["jax_default_matmul_precision"] = str(jax.config.jax_default_matmul_precision)
    return settings
