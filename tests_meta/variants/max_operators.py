"""MAX graph values with Python's operators: X @ W, + b; ops.relu."""

from max.graph import ops


def max_steps(x, w, b):
    a = x @ w
    z = a + b
    return a, z, ops.relu(z)
