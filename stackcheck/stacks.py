"""The stacks of the course as pytest parameters, and one way to run each on NumPy inputs.

``stack_params("numpy", "torch")`` yields ``(stack, device)`` parameters with their stack
and device markers, so ``pytest -m cuda`` selects exactly the CUDA variants and a stack
that is not installed is skipped with an install hint.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest


@dataclass(frozen=True)
class Stack:
    markers: tuple[str, ...]  # stack markers; the first decides availability on a device
    devices: tuple[str, ...]
    dtypes: tuple[str, ...]


STACKS = {
    "numpy": Stack(("numpy",), ("cpu",), ("float32", "float16")),
    "torch": Stack(("torch",), ("cpu", "cuda"), ("float32", "bfloat16", "float16")),
}


def stack_params(*names: str, devices: tuple[str, ...] | None = None) -> list:
    """pytest.param(stack, device) for every device each named stack runs on."""
    return [pytest.param(name, device, id=f"{name}-{device}",
                         marks=[getattr(pytest.mark, m) for m in STACKS[name].markers] + [getattr(pytest.mark, device)])
            for name in names for device in STACKS[name].devices if devices is None or device in devices]


def primary_stack(name: str) -> str:
    return STACKS[name].markers[0] if name in STACKS else name


def _torch_in(arrays, device: str, dtype: str):
    import torch

    return [torch.from_numpy(np.ascontiguousarray(a)).to(device=device, dtype=getattr(torch, dtype)) for a in arrays]


def _torch_out(t, dtype: str) -> np.ndarray:
    import torch

    if t.dtype != getattr(torch, dtype):
        raise AssertionError(f"the result is {t.dtype}, but the inputs were {dtype}: the path changed the dtype")
    return t.detach().to("cpu", torch.float64).numpy()


def run_steps(impl, stack: str, device: str, x, w, b, dtype: str = "float32"):
    """(A, Z, Y) of §2.2 from ``stack`` on ``device``, each returned as float64 NumPy."""
    if stack == "numpy":
        np_dtype = np.dtype(dtype)
        outs = impl.numpy_steps(*(np.asarray(v, dtype=np_dtype) for v in (x, w, b)))
        for out in outs:
            if out.dtype != np_dtype:
                raise AssertionError(f"the result is {out.dtype}, but the inputs were {dtype}")
        return tuple(np.asarray(o, dtype=np.float64) for o in outs)
    if stack == "torch":
        return tuple(_torch_out(t, dtype) for t in impl.torch_steps(*_torch_in((x, w, b), device, dtype)))
    raise ValueError(f"stack {stack!r} has no step-by-step path")


def run_forward(impl, stack: str, device: str, x, w, b, dtype: str = "float32") -> np.ndarray:
    """Y = ReLU(X @ W + b) from ``stack`` on ``device``, returned as float64 NumPy."""
    if stack == "numpy":
        np_dtype = np.dtype(dtype)
        out = impl.numpy_forward(*(np.asarray(v, dtype=np_dtype) for v in (x, w, b)))
        if out.dtype != np_dtype:
            raise AssertionError(f"the result is {out.dtype}, but the inputs were {dtype}")
        return np.asarray(out, dtype=np.float64)
    if stack == "torch":
        return _torch_out(impl.torch_forward(*_torch_in((x, w, b), device, dtype)), dtype)
    raise ValueError(f"unknown stack {stack!r}; known: {sorted(STACKS)}")
