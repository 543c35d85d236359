"""b as a row (b[None, :]) broadcast to [n, M]: NumPy's broadcasting rules make the view."""

import numpy as np


def broadcast_bias(b, n: int):
    return np.broadcast_to(b[None, :], (n, len(b)))
