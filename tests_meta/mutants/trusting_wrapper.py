"""A wrapper that checks nothing: it launches on whatever it is given."""

import torch

from stackcheck.toolchains.triton_kernels import compiled_kernel, interpreted_kernel, launch


def triton_bias_relu(a, b, block_size=256, out=None):
    out = torch.empty_like(a) if out is None else out
    launch((compiled_kernel, interpreted_kernel), a, b, out, block_size)
    return out
