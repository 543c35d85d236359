"""§5.2: graph-level fusion (bias add and ReLU in one kernel) is not the FMA instruction (a * b + c
in one instruction). Read in the PTX Triton writes for sm_90, on any machine, with the numbers of
the fused kernel run on the device (the interpreter on a CPU, the GPU itself on cuda): the
implementation's triton_bias_relu must launch one Triton kernel for it, not compute in torch, and that
kernel's own PTX (built from its source for sm_90 on any machine) adds b with no FMA."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, uniform
from stackcheck.impl import kernel_source
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params


@pytest.mark.claim("S5.2-fma")
@pytest.mark.parametrize("device", device_params("triton"))
def test_the_fused_bias_relu_kernel_has_no_fma_and_a_mul_add_has_one(impl, launches, device):
    torch = need("torch")
    from stackcheck.toolchains import triton_kernels

    fused, mul_add = triton_kernels.bias_relu_ptx_sm90(), triton_kernels.mul_add_ptx_sm90()
    judges.assert_fusion_is_not_fma(fused, mul_add)
    a_np, b_np = uniform((33, 65), seed=61), uniform((65,), seed=62)
    y = impl.triton_bias_relu(torch.from_numpy(a_np).to(device), torch.from_numpy(b_np).to(device))  # run
    assert len(launches()) == 1, f"the fused bias + ReLU is one Triton kernel launch; launched {launches()}"
    judges.assert_no_fma_in_the_fused_kernel(kernel_source.compiled(launches()[0]).asm["ptx"])  # its own PTX
    assert_matches_reference(
        as_numpy(y),
        np.maximum(a_np.astype(np.float64) + b_np, 0),
        dtype="float32",
        k=1,
        what=f"ReLU(A + b) on {device}",
    )
