"""§12.4: "병목이 연산인가, 메모리인가, host인가? | 바꿔야 할 계층이 다름". Nsight Compute's speed of light
tells them apart on the course's two halves: the bias + ReLU kernel (§11.2) runs DRAM near its peak
and the SMs far from theirs (memory-bound); an fp32 4096^3 GEMM the other way round (compute-bound).
(Host-bound, the third answer, is S9.6-host-overhead.)"""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.toolchains import counters

N = 4096
BIAS_RELU = counters.request("bias_relu", metrics=counters.SPEED_OF_LIGHT, n=2 * N, m=2 * N)
GEMM = counters.request("matmul", metrics=counters.SPEED_OF_LIGHT, n=N, dtype="float32")
# Recorded on the H200: bias + ReLU at 67 % of DRAM's peak and 21 % of the SMs' (3.3x); the GEMM at
# 87 % of the SMs' and 3 % of DRAM's (28x).
MARGIN = 2.0


@pytest.mark.claim("S12.4-bottleneck")
@pytest.mark.cuda
@pytest.mark.triton
@pytest.mark.ncu(BIAS_RELU, GEMM)
def test_speed_of_light_tells_memory_bound_from_compute_bound(evidence):
    memory = judges.assert_bound_by(counters.profile(BIAS_RELU), "dram", "bias + ReLU", MARGIN)
    compute = judges.assert_bound_by(counters.profile(GEMM), "sm", f"fp32 {N}^3 GEMM", MARGIN)
    evidence(bias_relu=memory, gemm=compute)


@pytest.mark.claim("S12.4-bottleneck")
@pytest.mark.cuda
@pytest.mark.triton
@pytest.mark.checks("the numbers of the kernel the counters read, not which resource bounds it")
def test_the_profiled_bias_relu_computes_relu_of_a_plus_b():
    """The numbers of the kernel the counters read: no counters needed."""
    torch = need("torch")
    from stackcheck.toolchains.triton_kernels import bias_relu

    x, w, b = make_inputs(64, 32, 48, seed=156)
    a = torch.from_numpy(x).cuda() @ torch.from_numpy(w).cuda()
    y = bias_relu(a, torch.from_numpy(b).cuda())
    assert_matches_reference(y.cpu().numpy(), reference_forward(x, w, b), dtype="float32", k=32, what="bias + ReLU")
