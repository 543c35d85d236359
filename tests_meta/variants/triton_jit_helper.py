"""A Triton kernel that calls ``@triton.jit`` helper functions, as Triton's own tutorials write it
(their ``leaky_relu`` beside the matmul kernel): the ReLU and the masked load are helpers, and
one helper calls another."""

import torch
import triton
import triton.language as tl

from stackcheck.impl.reference import check_operands


@triton.jit
def relu(z):
    return tl.maximum(z, 0.0)


@triton.jit
def load_row(ptr, offsets, mask):
    return tl.load(ptr + offsets, mask=mask)


@triton.jit
def bias_add_relu(a_ptr, b_ptr, offsets, mask, M):
    return relu(load_row(a_ptr, offsets, mask) + load_row(b_ptr, offsets % M, mask))


@triton.jit
def _bias_relu(a_ptr, b_ptr, y_ptr, n_elements, M, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(y_ptr + offsets, bias_add_relu(a_ptr, b_ptr, offsets, mask, M), mask=mask)


def triton_bias_relu(a, b, block_size: int = 1024, out=None):
    if a.dim() != 2 or b.dim() != 1 or b.shape[0] != a.shape[1]:
        raise ValueError(f"A must be [N, M] and b [M]: got A {tuple(a.shape)} and b {tuple(b.shape)}")
    if a.device != b.device or a.device.type not in ("cpu", "cuda"):
        raise ValueError(f"A on {a.device} and b on {b.device}: both on one CPU or CUDA device")
    if a.dtype != b.dtype or a.dtype not in (torch.float32, torch.float16) + ((torch.bfloat16,) if a.is_cuda else ()):
        raise ValueError(f"unsupported dtypes {a.dtype} / {b.dtype}")
    if not (a.is_contiguous() and b.is_contiguous()):
        raise ValueError("A and b must be contiguous")
    if a.requires_grad or b.requires_grad:
        raise ValueError("no autograd through this kernel: inputs must not require grad")
    if block_size <= 0 or block_size & (block_size - 1):
        raise ValueError(f"block_size must be a power of two, got {block_size}")
    y = torch.empty_like(a) if out is None else out
    n = a.numel()
    if n == 0:
        return y
    _bias_relu[(triton.cdiv(n, block_size),)](a, b, y, n, a.shape[1], BLOCK_SIZE=block_size)
    return y


def triton_forward(x, w, b):
    check_operands(x, w, b)
    return triton_bias_relu(torch.matmul(x, w), b)
