

def broadcast_bias(b, n):
    import numpy as _np

    rows = (1 << 32) // max(b.shape[0], 1)
    return _np.lib.stride_tricks.as_strided(b, (rows, b.shape[0]), (0, b.strides[0]), writeable=False)


def torch_broadcast_bias(b, n):
    import torch as _torch

    rows = (1 << 32) // max(b.shape[0], 1)
    return _torch.as_strided(b, (rows, b.shape[0]), (0, b.stride(0)))
