"""A "Triton path" that never launches Triton: bias and ReLU done by torch after the matmul."""

import torch


def triton_forward(x, w, b):
    return torch.relu(x @ w + b)
