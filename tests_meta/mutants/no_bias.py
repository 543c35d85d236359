"""Forgets the bias: Y = ReLU(X @ W). The IR has no add; the numbers are off by b."""

import numpy as np


def torch_forward(x, w, b):
    return (x @ w).relu()


def jax_forward(x, w, b):
    return np.maximum(x @ w, 0) if isinstance(x, np.ndarray) else (x @ w).clip(0)


def max_steps(x, w, b):
    from max.graph import ops

    a = ops.matmul(x, w)
    return a, a, ops.relu(a)


def numpy_forward(x, w, b):
    return np.maximum(x @ w, 0)
