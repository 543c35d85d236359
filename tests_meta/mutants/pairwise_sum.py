"""A "sequential" sum that is NumPy's pairwise sum: the same number in exact arithmetic, other bits."""

import numpy as np


def sum_sequential(values):
    return np.sum(np.asarray(values, dtype=np.float32), dtype=np.float32)
