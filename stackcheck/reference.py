"""The course's reference solutions: the implementations under test.

``--impl MODULE`` replaces any of these names with a student's (or a mutant's) version;
a name the module lacks falls back to the one here. The surface:

=========================  ==================================================================
``check_operands(x,w,b)``   raise ValueError naming the shapes/devices unless X[N,K], W[K,M], b[M]
``numpy_steps(x,w,b)``      (A, Z, Y) with NumPy, in the inputs' dtype (§2.2)
``numpy_forward(x,w,b)``    Y = ReLU(X @ W + b) with NumPy
``broadcast_bias(b,n)``     b as an [n, M] view, without copying it n times (§2.3)
``torch_steps(x,w,b)``      (A, Z, Y) with torch eager, on the inputs' device and dtype
``torch_forward(x,w,b)``    Y with torch eager
``torch_broadcast_bias``    b as an [n, M] torch view sharing b's memory (§2.3)
``w_from_linear(linear)``   the course's W[K, M] from a torch.nn.Linear(K, M) (§2.1)
=========================  ==================================================================

Every forward validates its operands with ``check_operands`` first, so a K mismatch is a
clear shape error on every stack (course §2.1, experiment A).
"""
from __future__ import annotations

import numpy as np


def _shape(t) -> list[int]:
    return [int(d) for d in t.shape]


def check_operands(x, w, b) -> None:
    """Raise ValueError, naming shapes (or devices), unless X[N, K] @ W[K, M] + b[M] is well formed."""
    for name, t, rank, form in (("X", x, 2, "[N, K]"), ("W", w, 2, "[K, M]"), ("b", b, 1, "[M]")):
        if len(t.shape) != rank:
            raise ValueError(f"{name} must be {rank}-D {form}, got shape {_shape(t)} (course §2.1)")
    if x.shape[1] != w.shape[0]:
        raise ValueError(
            f"K mismatch: X has shape {_shape(x)} (K={x.shape[1]}) but W has shape {_shape(w)} "
            f"(K={w.shape[0]}); the contraction dimension K must agree. This is a shape error, "
            f"not a device error (course §2.1)")
    if b.shape[0] != w.shape[1]:
        raise ValueError(f"b has shape {_shape(b)} but W has shape {_shape(w)}: b must be [M] = [{w.shape[1]}] "
                         f"(course §2.1)")
    devices = {name: str(t.device) for name, t in (("X", x), ("W", w), ("b", b)) if hasattr(t, "device")}
    if len(set(devices.values())) > 1:
        placed = ", ".join(f"{n} on {d}" for n, d in devices.items())
        raise ValueError(f"operands on different devices ({placed}); move them to one device first "
                         f"(course §6.2)")


def numpy_steps(x, w, b):
    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, np.maximum(z, 0)


def numpy_forward(x, w, b):
    return numpy_steps(x, w, b)[2]


def broadcast_bias(b, n: int):
    return np.broadcast_to(b, (n, b.shape[0]))


def torch_steps(x, w, b):
    import torch

    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, torch.relu(z)


def torch_forward(x, w, b):
    return torch_steps(x, w, b)[2]


def torch_broadcast_bias(b, n: int):
    return b.expand(n, b.shape[0])


def w_from_linear(linear):
    return linear.weight.T
