"""A bias + ReLU kernel that sends Z through the matrix unit: Y = max(Z @ I, 0) with tl.dot on an
identity tile (three TF32 passes, so the numbers hold). The misconception of MC05: ReLU on the
Tensor Cores."""

import torch
import triton
import triton.language as tl

from stackcheck.toolchains.triton_kernels import validate


@triton.jit
def _bias_relu(a_ptr, b_ptr, y_ptr, N, M, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = (rows[:, None] < N) & (cols[None, :] < M)
    a = tl.load(a_ptr + rows[:, None] * M + cols[None, :], mask=inside, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < M, other=0.0)
    eye = (tl.arange(0, BLOCK)[:, None] == tl.arange(0, BLOCK)[None, :]).to(tl.float32)
    z = tl.dot(a + b[None, :], eye, input_precision="tf32x3")
    tl.store(y_ptr + rows[:, None] * M + cols[None, :], tl.maximum(z, 0.0), mask=inside)


def triton_bias_relu(a, b, block_size=256, out=None):
    validate(a, b)
    out = torch.empty_like(a) if out is None else out
    n, m = a.shape
    if a.numel():
        _bias_relu[(triton.cdiv(n, 16), triton.cdiv(m, 16))](a, b, out, n, m, BLOCK=16)
    return out
