"""A Triton kernel whose column index is found without %, a 512-element default block, out= honored,
and torch.mm for the product."""

import torch
import triton
import triton.language as tl

from stackcheck.impl.reference import check_operands


@triton.jit
def _kernel(a_ptr, b_ptr, y_ptr, total, m, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = i < total
    column = i - (i // m) * m
    z = tl.load(a_ptr + i, mask=inside, other=0.0) + tl.load(b_ptr + column, mask=inside, other=0.0)
    tl.store(y_ptr + i, tl.where(z > 0, z, 0.0), mask=inside)


def triton_bias_relu(a, b, block_size: int = 512, out=None):
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        raise ValueError("A and b must be torch tensors")
    if a.ndim != 2 or b.ndim != 1 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need A [N, M] and b [M], got {list(a.shape)} and {list(b.shape)}")
    if a.device != b.device or a.device.type not in ("cpu", "cuda"):
        raise ValueError(f"A ({a.device}) and b ({b.device}) must share a CPU or CUDA device")
    allowed = (torch.float32, torch.float16, torch.bfloat16) if a.is_cuda else (torch.float32, torch.float16)
    if a.dtype not in allowed or b.dtype != a.dtype:
        raise ValueError(f"dtype {a.dtype}/{b.dtype} not supported")
    if not a.is_contiguous() or not b.is_contiguous():
        raise ValueError("non-contiguous input")
    if a.requires_grad or b.requires_grad:
        raise ValueError("inputs that require grad are not supported")
    if block_size < 1 or (block_size & (block_size - 1)) != 0:
        raise ValueError(f"block_size {block_size} is not a power of two")
    y = out if out is not None else torch.empty_like(a)
    if a.numel():
        _kernel[(triton.cdiv(a.numel(), block_size),)](a, b, y, a.numel(), a.shape[1], BLOCK=block_size)
    return y


def triton_forward(x, w, b):
    check_operands(x, w, b)
    return triton_bias_relu(torch.mm(x, w), b)
