"""torch.broadcast_to for the bias view; W from nn.Linear by .t()."""

import torch


def torch_broadcast_bias(b, n: int):
    return torch.broadcast_to(b, (n, b.shape[0]))


def w_from_linear(linear):
    return linear.weight.t()
