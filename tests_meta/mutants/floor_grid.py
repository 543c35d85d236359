"""A launch grid of n // BLOCK_SIZE programs (rounded down): the last, partial block never runs."""

import torch

from stackcheck.toolchains.triton_kernels import compiled_kernel, interpreted_kernel, interpreter, validate


def triton_bias_relu(a, b, block_size=256, out=None):
    validate(a, b)
    out = torch.empty_like(a) if out is None else out
    n = a.numel()
    grid = (n // block_size,)
    if a.device.type == "cuda":
        compiled_kernel[grid](a, b, out, n, M=a.shape[1], BLOCK_SIZE=block_size)
    else:
        with interpreter(True):
            interpreted_kernel[grid](a, b, out, n, M=a.shape[1], BLOCK_SIZE=block_size)
    return out
