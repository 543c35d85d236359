"""float32 sums by running totals: np.cumsum accumulates left to right in float32."""

import numpy as np


def sum_sequential(values):
    values = np.asarray(values, dtype=np.float32)
    return np.cumsum(values, dtype=np.float32)[-1] if values.size else np.float32(0)


def sum_blocked(values, block: int):
    values = np.asarray(values, dtype=np.float32)
    partials = np.array([sum_sequential(values[i : i + block]) for i in range(0, values.size, block)], dtype=np.float32)
    return sum_sequential(partials)
