"""Adds the bias one row at a time: N graph nodes where the course has one broadcast add."""

import torch


def torch_forward(x, w, b):
    a = x @ w
    return torch.stack([(a[i] + b) for i in range(a.shape[0])]).relu()
