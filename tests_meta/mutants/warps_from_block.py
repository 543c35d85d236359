"""A bias + ReLU kernel whose host reads BLOCK_SIZE as a thread count: num_warps = BLOCK_SIZE / 32, so
each program runs one thread per element. The right numbers; the misconception of §11.3."""

import torch
import triton
import triton.language as tl

from stackcheck.toolchains.triton_kernels import validate


@triton.jit
def _bias_relu(a_ptr, b_ptr, y_ptr, n_elements, M: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets % M, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(a + b, 0.0), mask=mask)


def triton_bias_relu(a, b, block_size=256, out=None):
    validate(a, b)
    out = torch.empty_like(a) if out is None else out
    n = a.numel()
    if n:
        warps = max(1, min(32, block_size // 32))  # "one thread per element of the block"
        _bias_relu[(triton.cdiv(n, block_size),)](a, b, out, n, M=a.shape[1], BLOCK_SIZE=block_size, num_warps=warps)
    return out
