"""A "Triton" bias + ReLU that validates like the kernel's wrapper, then computes in torch: the right
numbers, and no kernel at all."""

import torch

from stackcheck.toolchains.triton_kernels import validate


def triton_bias_relu(a, b, block_size=256, out=None):
    validate(a, b)
    y = torch.relu(a + b)
    return out.copy_(y) if out is not None else y
