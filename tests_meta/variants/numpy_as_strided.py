"""b seen as [n, M] by setting the strides by hand: 0 bytes to the next row, read-only."""

from numpy.lib.stride_tricks import as_strided


def broadcast_bias(b, n: int):
    return as_strided(b, shape=(n, b.shape[0]), strides=(0, b.strides[0]), writeable=False)
