"""ReLU written as abs: right for positive Z, wrong for negative Z."""

import numpy as np


def numpy_steps(x, w, b):
    a = x @ w
    z = a + b
    return a, z, np.abs(z)


def torch_steps(x, w, b):
    a = x @ w
    z = a + b
    return a, z, z.abs()
