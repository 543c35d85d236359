"""The closed-form gradient of loss = mean(Y²), Y = ReLU(X @ W + b), in float64 (§8.2, §9.5)."""

import numpy as np


def closed_form(x, w, b):
    """dZ = 2Y/(N·M) masked by Z > 0; dX = dZ Wᵀ; dW = Xᵀ dZ; db = Σ_rows dZ."""
    x, w, b = (np.asarray(v, dtype=np.float64) for v in (x, w, b))
    z = x @ w + b
    y = np.maximum(z, 0.0)
    n, m = y.shape
    dz = 2.0 * y / (n * m) * (z > 0)
    return {"Y": y, "loss": np.mean(y**2), "dX": dz @ w.T, "dW": x.T @ dz, "db": dz.sum(axis=0)}


def assert_no_gradient_through(op, z, out) -> dict:
    """§10.3: ``op(out, z)`` (a custom op that writes ``out``, called from torch) has no autograd
    rule: given a ``z`` that requires a gradient it is refused, or it writes an ``out`` that no
    gradient flows back through. Returns what happened, for the report."""
    tracked = z.detach().clone().requires_grad_(True)
    try:
        op(out, tracked)
    except Exception as error:  # refused: the bridge will not take a tensor autograd tracks
        return {"with_grad": f"refused: {type(error).__name__}: {str(error).splitlines()[0][:120]}"}
    assert not out.requires_grad and out.grad_fn is None, (
        f"a gradient flows through the custom op: its output has grad_fn {out.grad_fn}; the course's custom "
        "ReLU defines no backward"
    )
    return {"with_grad": "accepted, and its output carries no gradient"}
