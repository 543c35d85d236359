"""A Triton kernel on a 2-D grid (N, cdiv(M, BLOCK)): each program takes one row's block of columns,
so the bias is read by column index directly, no modulo."""

import torch
import triton
import triton.language as tl

from stackcheck.impl.reference import check_operands


@triton.jit
def _row_kernel(a_ptr, b_ptr, y_ptr, m, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    columns = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    keep = columns < m
    z = tl.load(a_ptr + row * m + columns, mask=keep) + tl.load(b_ptr + columns, mask=keep)
    tl.store(y_ptr + row * m + columns, tl.maximum(z, 0.0), mask=keep)


def triton_bias_relu(a, b, block_size: int = 256, out=None):
    tensors = isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
    shaped = tensors and a.ndim == 2 and b.ndim == 1
    problems = [
        (
            not shaped,
            lambda: f"A must be a 2-D tensor and b 1-D: got {getattr(a, 'shape', a)} and {getattr(b, 'shape', b)}",
        ),
        (shaped and b.shape[0] != a.shape[1], lambda: f"b {tuple(b.shape)} does not match A {tuple(a.shape)}"),
        (a.device != b.device or a.device.type not in ("cpu", "cuda"), lambda: f"devices {a.device}, {b.device}"),
        (
            a.dtype != b.dtype or a.dtype not in (torch.float32, torch.float16, torch.bfloat16),
            lambda: f"dtypes {a.dtype} and {b.dtype} are not supported here",
        ),
        (a.dtype == torch.bfloat16 and not a.is_cuda, lambda: "bfloat16 runs on CUDA only"),
        (not (a.is_contiguous() and b.is_contiguous()), lambda: "A and b must be contiguous"),
        (a.requires_grad or b.requires_grad, lambda: "this kernel has no backward: inputs must not require grad"),
        (block_size <= 0 or block_size & (block_size - 1), lambda: f"block_size {block_size} is no power of two"),
    ]
    for failed, message in problems:
        if failed:
            raise ValueError(message())
    y = out if out is not None else torch.empty_like(a)
    if a.numel():
        n, m = a.shape
        _row_kernel[(n, triton.cdiv(m, block_size))](a, b, y, m, BLOCK=block_size)
    return y


def triton_forward(x, w, b):
    check_operands(x, w, b)
    return triton_bias_relu(x @ w, b)
