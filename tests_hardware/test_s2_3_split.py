"""§2.3 (and §7.1): one graph node is not one kernel. A matmul whose K dwarfs its output,
fp32 [64, 2^22] @ [2^22, 64], cannot fill the GPU with output tiles, so the library splits K:
the one `x @ w` launches two or more kernels (partial products, then their reduction), read by ncu."""

import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, per_gpu
from stackcheck.evidence.numerics import assert_exact, uniform
from stackcheck.stacks.available import need
from stackcheck.toolchains import counters

N = M = 64

K = per_gpu.split_k(device_profile.current(), N, M)  # 2^22, less on a small GPU
LONG_K = counters.request("matmul", metrics=["time_ns"], n=N, m=M, k=K, dtype="float32")


@pytest.mark.claim("S2.3-split")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.ncu(LONG_K)
def test_one_long_k_matmul_launches_several_kernels(evidence):
    kernels = counters.profile(LONG_K)
    evidence(graph_nodes=1, kernels=[k.summary() for k in kernels])
    judges.assert_split_into_kernels(kernels, f"fp32 [{N}, {K}] @ [{K}, {M}]")


@pytest.mark.claim("S2.3-split")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.checks("the numbers of the split (exact however K is split), not that one matmul launches several kernels")
def test_a_long_k_product_is_exact_however_the_library_splits_k():
    """The numbers of the split, which need no counters (a GPU that refuses ncu still shows them)."""
    torch = need("torch")
    # The same shape on values in {-1, 0, 1}: every partial sum is an integer below 2^24, exact in
    # float32, so however K is split the product must equal the float64 one bit for bit.
    x, w = (torch.from_numpy(uniform(shape, seed=s)).round().cuda() for shape, s in (((N, K), 23), ((K, M), 24)))
    assert_exact(x @ w, x.double() @ w.double(), what="the split-K product of integer-valued inputs", N=N, K=K, M=M)
