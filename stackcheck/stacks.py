"""The stacks of the course as pytest parameters, and one way to run each on NumPy inputs.

``stack_params("numpy", "torch")`` yields ``(stack, device)`` parameters (with ``dtypes=True``
``(stack, device, dtype)``) carrying their stack and device markers, so ``pytest -m cuda``
selects exactly the CUDA variants and a stack that is not installed is skipped with an
install hint. Runners take float32 NumPy arrays holding values exact in ``dtype`` and return
float64 NumPy; each checks that the path kept the dtype.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from stackcheck.env import jax_device
from stackcheck.numerics import DTYPES


@dataclass(frozen=True)
class Stack:
    markers: tuple[str, ...]  # stack markers; the first decides whether a device is usable
    dtypes: dict[str, tuple[str, ...]]  # device -> dtypes this stack computes in there
    fused_steps: bool = False  # True: A and Z are not outputs of the path (only Y is observable)


STACKS = {
    "numpy": Stack(("numpy",), {"cpu": ("float32", "float16")}),
    "torch": Stack(("torch",), {"cpu": DTYPES, "cuda": DTYPES}),
    "torch_compile": Stack(("torch",), {"cpu": DTYPES, "cuda": DTYPES}),
    "jax": Stack(("jax",), {"cpu": DTYPES, "cuda": DTYPES, "tpu": DTYPES}),
    "max": Stack(("max",), {"cpu": DTYPES}),
    # The Triton interpreter has no bfloat16 (NumPy has none); compiled CUDA has all three.
    "triton": Stack(("triton", "torch"), {"cpu": ("float32", "float16"), "cuda": DTYPES}, fused_steps=True),
    "mojo": Stack(("mojo", "max"), {"cpu": ("float32",)}, fused_steps=True),
}
ALL_STACKS = tuple(STACKS)


def _marks(name: str, device: str) -> list:
    return [getattr(pytest.mark, m) for m in STACKS[name].markers] + [getattr(pytest.mark, device)]


def stack_params(*names: str, devices: tuple[str, ...] | None = None, dtypes: bool = False) -> list:
    """pytest.param(stack, device[, dtype]) for every device (and dtype) each named stack runs on."""
    params = []
    for name in names or ALL_STACKS:
        for device, device_dtypes in STACKS[name].dtypes.items():
            if devices is not None and device not in devices:
                continue
            if dtypes:
                params += [pytest.param(name, device, dt, id=f"{name}-{device}-{dt}", marks=_marks(name, device))
                           for dt in device_dtypes]
            else:
                params.append(pytest.param(name, device, id=f"{name}-{device}", marks=_marks(name, device)))
    return params


def primary_stack(name: str) -> str:
    return STACKS[name].markers[0] if name in STACKS else name


def _np_in(arrays, dtype: str):
    return [np.asarray(a, dtype=np.dtype(dtype)) for a in arrays]


def _np_out(out, dtype: str) -> np.ndarray:
    if out.dtype != np.dtype(dtype):
        raise AssertionError(f"the result is {out.dtype}, but the inputs were {dtype}: the path changed the dtype")
    return np.asarray(out, dtype=np.float64)


def _torch_in(arrays, device: str, dtype: str):
    import torch

    return [torch.from_numpy(np.ascontiguousarray(a)).to(device=device, dtype=getattr(torch, dtype)) for a in arrays]


def _torch_out(t, dtype: str) -> np.ndarray:
    import torch

    if t.dtype != getattr(torch, dtype):
        raise AssertionError(f"the result is {t.dtype}, but the inputs were {dtype}: the path changed the dtype")
    return t.detach().to("cpu", torch.float64).numpy()


def _jax_in(arrays, device: str, dtype: str):
    import jax
    import jax.numpy as jnp

    target = jax_device(device)
    return [jax.device_put(jnp.asarray(a, dtype=getattr(jnp, dtype)), target) for a in arrays]


def _jax_out(a, dtype: str) -> np.ndarray:
    if str(a.dtype) != dtype:
        raise AssertionError(f"the result is {a.dtype}, but the inputs were {dtype}: the path changed the dtype")
    return np.asarray(a.astype("float32"), dtype=np.float64)


def _max_outputs(impl, x, w, b):
    from stackcheck import max_graphs

    impl.check_operands(x, w, b)
    return max_graphs.execute("math", impl, x, w, b)


def run_steps(impl, stack: str, device: str, x, w, b, dtype: str = "float32"):
    """(A, Z, Y) from ``stack`` on ``device`` as float64 NumPy; A or Z is None where the path fuses it away."""
    if stack == "numpy":
        return tuple(_np_out(o, dtype) for o in impl.numpy_steps(*_np_in((x, w, b), dtype)))
    if stack in ("torch", "torch_compile"):
        import torch

        steps = impl.torch_steps if stack == "torch" else torch.compile(impl.torch_steps, dynamic=True)
        return tuple(_torch_out(t, dtype) for t in steps(*_torch_in((x, w, b), device, dtype)))
    if stack == "jax":
        return tuple(_jax_out(o, dtype) for o in impl.jax_steps(*_jax_in((x, w, b), device, dtype)))
    if stack == "max" and dtype == "float32":
        outs = _max_outputs(impl, x, w, b)
        return tuple(np.asarray(outs[k], dtype=np.float64) for k in ("a", "z", "y"))
    if stack == "triton":
        xt, wt, bt = _torch_in((x, w, b), device, dtype)
        a = xt @ wt
        return _torch_out(a, dtype), None, _torch_out(impl.triton_bias_relu(a, bt), dtype)
    if stack == "mojo":
        outs = _max_outputs(impl, x, w, b)
        return np.asarray(outs["a"], dtype=np.float64), None, np.asarray(outs["y_mojo"], dtype=np.float64)
    raise ValueError(f"no step-by-step path for stack {stack!r} in {dtype}")


def run_forward(impl, stack: str, device: str, x, w, b, dtype: str = "float32") -> np.ndarray:
    """Y = ReLU(X @ W + b) from ``stack`` on ``device`` in ``dtype``, returned as float64 NumPy."""
    if stack == "numpy":
        return _np_out(impl.numpy_forward(*_np_in((x, w, b), dtype)), dtype)
    if stack == "torch":
        return _torch_out(impl.torch_forward(*_torch_in((x, w, b), device, dtype)), dtype)
    if stack == "torch_compile":
        return _torch_out(impl.torch_compiled_forward(*_torch_in((x, w, b), device, dtype)), dtype)
    if stack == "jax":
        return _jax_out(impl.jax_forward(*_jax_in((x, w, b), device, dtype)), dtype)
    if stack == "triton":
        return _torch_out(impl.triton_forward(*_torch_in((x, w, b), device, dtype)), dtype)
    if stack in ("max", "mojo"):
        outs = _max_outputs(impl, x, w, b)
        key = "y_mojo" if stack == "mojo" else ("y" if dtype == "float32" else f"y_{dtype}")
        return np.asarray(outs[key], dtype=np.float64)
    raise ValueError(f"unknown stack {stack!r}; known: {sorted(STACKS)}")
