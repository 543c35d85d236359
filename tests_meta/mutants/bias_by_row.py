"""The §11.2 kernel indexing the bias by row (offset // M) instead of by column (offset % M)."""

import triton.language as tl

from stackcheck.toolchains.triton_kernels import bias_relu, jit_both


def _bias_by_row(a_ptr, b_ptr, y_ptr, n_elements, M: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + (offsets // M) % M, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(a + b, 0.0), mask=mask)


KERNELS = jit_both(_bias_by_row)


def triton_bias_relu(a, b, block_size=256, out=None):
    return bias_relu(a, b, block_size=block_size, out=out, kernels=KERNELS)
