"""§1.2: eager mode does not mean the chip runs Python: an eager matmul calls a kernel that was
compiled long before, in a library (cuBLAS), and nothing is compiled for it. The kernel is named by
ncu on the GPU; the absence of compiles is counted in-process."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.compiles import torch_compiles
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.toolchains import counters

MATMUL = counters.request("matmul", n=1024, dtype="float32")


@pytest.mark.claim("S1.2-eager-library")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.ncu(MATMUL)
def test_an_eager_matmul_is_one_library_kernel(evidence):
    kernels = counters.profile(MATMUL)
    evidence(kernels=[k.summary() for k in kernels])
    judges.assert_library_kernel(kernels, "eager X @ W")


@pytest.mark.claim("S1.2-eager-library")
@pytest.mark.cuda
@pytest.mark.torch
def test_the_eager_forward_compiles_nothing_and_computes_the_forward(impl, evidence):
    """The learner's eager forward on the GPU: no graph compiled, and under the profiler its matmul is
    device work launched by an ATen matmul op (a library's kernel, read by the op that launched it,
    not by a kernel's name); the right numbers (no counters needed)."""
    torch = need("torch")
    x, w, b = make_inputs(256, 128, 64, seed=12)
    inputs = [torch.from_numpy(a).cuda() for a in (x, w, b)]
    torch.cuda.synchronize()
    activities = [
        torch.profiler.ProfilerActivity.CPU,
        torch.profiler.ProfilerActivity.CUDA,
    ]  # the ops and their kernels
    with torch_compiles() as count, torch.profiler.profile(activities=activities) as prof:
        y = impl.torch_forward(*inputs)
        torch.cuda.synchronize()
    assert count.compiles == 0, f"eager ReLU(X @ W + b) compiled {count.compiles} graph(s)"
    launched = judges.ops_with_device_time(prof.key_averages())
    evidence(ops_with_device_time=launched)
    assert judges.MATMUL_OPS & set(launched), (
        f"the eager forward's matmul runs as a kernel an ATen matmul op launched (a library's): {launched}"
    )
    assert_matches_reference(y.cpu().numpy().astype(np.float64), reference_forward(x, w, b), dtype="float32", k=128)
