"""ReLU written as where(Z > 0, Z, 0): right on every number, but NaN > 0 is False, so ReLU(NaN)
comes out 0 where max(Z, 0) keeps the NaN (the contract's "NaN where Z is NaN")."""

import numpy as np

from stackcheck.impl.reference import check_operands


def numpy_steps(x, w, b):
    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, np.where(z > 0, z, 0).astype(z.dtype)
