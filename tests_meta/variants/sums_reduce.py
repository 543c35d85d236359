"""float32 sums by functools.reduce, each addition rounded to float32."""

import functools

import numpy as np


def sum_sequential(values):
    return functools.reduce(lambda s, v: np.float32(s + v), np.asarray(values, dtype=np.float32), np.float32(0))


def sum_blocked(values, block: int):
    values = np.asarray(values, dtype=np.float32)
    return sum_sequential([sum_sequential(values[start : start + block]) for start in range(0, values.size, block)])
