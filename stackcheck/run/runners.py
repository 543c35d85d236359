"""Running a stack (course §2.2, §10.3, §11.4): for each stack of ``stackcheck.stacks``, how its steps
(A, Z, Y) and its forward Y = ReLU(X @ W + b) are computed from the implementation under test. The
records in ``stacks`` are data; this is the only module that runs one, so that knowing what a stack
is never imports what runs it (MAX graphs, Triton kernels).

Runners take float32 NumPy arrays holding values exact in ``dtype`` and return float64 NumPy; each
checks that the path kept the dtype.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from stackcheck.stacks.records import (
    STACKS,
    assert_dtype_kept,
    jax_in,
    jax_out,
    numpy_in,
    numpy_out,
    torch_in,
    torch_out,
)


def _max_outputs(impl, device, x, w, b) -> dict[str, np.ndarray]:
    from stackcheck.run import max_graphs

    impl.check_operands(x, w, b)
    outputs = max_graphs.execute(max_graphs.on_device("math", device), impl, x, w, b)
    return {k: v if isinstance(v, max_graphs.Refused) else np.asarray(v, dtype=np.float64) for k, v in outputs.items()}


# ---- what each path runs ------------------------------------------------------------------


def calls(surface: str, convert_in: Callable, convert_out: Callable) -> Callable:
    """A runner that converts X, W, b for the stack, calls the implementation's ``surface`` name,
    and converts what it returns (one tensor, or a tuple of them) back to float64 NumPy."""

    def run(impl, device, dtype, x, w, b):
        out = getattr(impl, surface)(*convert_in((x, w, b), device, dtype))
        return tuple(convert_out(o, dtype) for o in out) if isinstance(out, tuple) else convert_out(out, dtype)

    return run


def _compiled_steps(impl, device, dtype, x, w, b):
    from stackcheck.grading import judge

    steps = judge.compiled(impl.torch_steps, dynamic=True)  # in a graded run, compiled in its worker
    return tuple(torch_out(t, dtype) for t in steps(*torch_in((x, w, b), device, dtype)))


def _max_steps(impl, device, dtype, x, w, b):
    if dtype != "float32":
        raise ValueError(f"the MAX graph's steps are float32 only, not {dtype}")
    outs = _max_outputs(impl, device, x, w, b)
    return outs["a"], outs["z"], outs["y"]


def _max_forward(impl, device, dtype, x, w, b):
    from stackcheck.run import max_graphs

    outs = _max_outputs(impl, device, x, w, b)
    if dtype == "float32":
        return outs["y"]
    y, returned = max_graphs.low_precision_y(outs, dtype)
    assert_dtype_kept(returned, dtype)
    return y


def _triton_steps(impl, device, dtype, x, w, b):
    xt, wt, bt = torch_in((x, w, b), device, dtype)
    a = xt @ wt
    return torch_out(a, dtype), None, torch_out(impl.triton_bias_relu(a, bt), dtype)


def _mojo_steps(impl, device, dtype, x, w, b):
    outs = _max_outputs(impl, device, x, w, b)
    return outs["a"], None, outs["y_mojo"]


def _mojo_forward(impl, device, dtype, x, w, b):
    return _max_outputs(impl, device, x, w, b)["y_mojo"]


# stack -> (steps runner, forward runner); each (impl, device, dtype, x, w, b)
RUNNERS: dict[str, tuple[Callable, Callable]] = {
    "numpy": (calls("numpy_steps", numpy_in, numpy_out), calls("numpy_forward", numpy_in, numpy_out)),
    "torch": (calls("torch_steps", torch_in, torch_out), calls("torch_forward", torch_in, torch_out)),
    "torch_compile": (_compiled_steps, calls("torch_compiled_forward", torch_in, torch_out)),
    "jax": (calls("jax_steps", jax_in, jax_out), calls("jax_forward", jax_in, jax_out)),
    "max": (_max_steps, _max_forward),
    "triton": (_triton_steps, calls("triton_forward", torch_in, torch_out)),
    "mojo": (_mojo_steps, _mojo_forward),
}
if set(RUNNERS) != set(STACKS):
    raise ValueError(f"every stack needs its runners: stacks {sorted(STACKS)}, runners {sorted(RUNNERS)}")


def _runners(stack: str) -> tuple[Callable, Callable]:
    if stack not in RUNNERS:
        raise ValueError(f"unknown stack {stack!r}; known: {sorted(STACKS)}")
    return RUNNERS[stack]


def run_steps(impl, stack: str, device: str, x, w, b, dtype: str = "float32"):
    """(A, Z, Y) from ``stack`` on ``device`` as float64 NumPy; A or Z is None where the path fuses it away."""
    return _runners(stack)[0](impl, device, dtype, x, w, b)


def run_forward(impl, stack: str, device: str, x, w, b, dtype: str = "float32") -> np.ndarray:
    """Y = ReLU(X @ W + b) from ``stack`` on ``device`` in ``dtype``, returned as float64 NumPy."""
    return _runners(stack)[1](impl, device, dtype, x, w, b)
