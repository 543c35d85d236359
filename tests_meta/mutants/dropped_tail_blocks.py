"""A blocked sum that walks whole blocks only: a last, shorter run of elements is never added."""

import numpy as np

from stackcheck.impl.reference import sum_sequential


def sum_blocked(values, block):
    values = np.asarray(values, dtype=np.float32)
    whole = len(values) // block * block
    return sum_sequential([sum_sequential(values[i : i + block]) for i in range(0, whole, block)])
