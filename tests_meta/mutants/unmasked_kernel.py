"""The §11.2 kernel without its mask: the last program loads and stores past the end."""

import triton.language as tl

from stackcheck.toolchains.triton_kernels import bias_relu, jit_both


def _unmasked(a_ptr, b_ptr, y_ptr, n_elements, M: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    a = tl.load(a_ptr + offsets)
    b = tl.load(b_ptr + offsets % M)
    tl.store(y_ptr + offsets, tl.maximum(a + b, 0.0))


KERNELS = jit_both(_unmasked)


def triton_bias_relu(a, b, block_size=256, out=None):
    return bias_relu(a, b, block_size=block_size, out=out, kernels=KERNELS)
