"""Returns Y transposed: [M, N] instead of [N, M]."""

import numpy as np


def numpy_forward(x, w, b):
    return np.maximum(x @ w + b, 0).T.copy()


def torch_forward(x, w, b):
    import torch

    return torch.relu(x @ w + b).T.contiguous()
