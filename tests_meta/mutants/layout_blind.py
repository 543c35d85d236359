"""A forward that assumes row-major storage: right for contiguous X, wrong for a transposed view."""

import torch


def torch_forward(x, w, b):
    x = torch.as_strided(x, x.shape, (x.shape[1], 1))
    return torch.relu(x @ w + b)
