"""A compiled forward that cuts b out of autograd: Y is right, db never arrives."""

import torch


def torch_compiled_forward(x, w, b):
    return torch.relu(x @ w + b.detach())
