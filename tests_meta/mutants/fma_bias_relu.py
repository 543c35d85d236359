"""A bias + ReLU kernel that scales A by a runtime 1.0 before the add: the right numbers, and the a * s + b
becomes one fma.rn.f32 in its PTX (the misconception of §5.2: the fused kernel as an FMA)."""

import torch
import triton
import triton.language as tl

from stackcheck.toolchains.triton_kernels import validate


@triton.jit
def _bias_relu(a_ptr, b_ptr, y_ptr, n_elements, scale, M: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets % M, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(a * scale + b, 0.0), mask=mask)


def triton_bias_relu(a, b, block_size=256, out=None):
    validate(a, b)
    out = torch.empty_like(a) if out is None else out
    n = a.numel()
    if n:
        _bias_relu[(triton.cdiv(n, block_size),)](a, b, out, n, 1.0, M=a.shape[1], BLOCK_SIZE=block_size)
    return out
