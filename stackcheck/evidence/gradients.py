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
