"""MC05 (§14.1, §7.2, §7.3): ReLU does not run on the matrix unit. The bias + ReLU kernel issues no
Tensor Core instruction (H200 counters), and the learner's own bias + ReLU kernels hold no
matrix-unit instruction in their PTX; in the fused epilogue the dot is on the tensor pipe and the
ReLU is an ordinary max after it (PTX for sm_90, on any machine)."""

import re

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, uniform
from stackcheck.impl import kernel_source
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import counters

BIAS_RELU, FUSED = (
    counters.request("bias_relu", n=4096, m=4096),
    counters.request("fused_forward", n=2048, m=2048, k=256),
)
MMA, MAX = re.compile(r"\b(?:wgmma|mma)\.\w+"), re.compile(r"\bmax\.f32\b")


def bias_relu_checked(impl, device: str, n: int = 257, m: int = 129):
    torch = need("torch")
    a, b = uniform((n, m), seed=51), uniform((m,), seed=52)
    y = impl.triton_bias_relu(torch.from_numpy(a).to(device), torch.from_numpy(b).to(device))
    assert_matches_reference(
        as_numpy(y), np.maximum(a.astype(np.float64) + b, 0), dtype="float32", k=1, what="ReLU(A + b)"
    )


@pytest.mark.claim("MC05")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
@pytest.mark.ncu(BIAS_RELU, FUSED)
@pytest.mark.gpu_needs("tf32")  # the fused kernel's float32 dot is on the tensor pipe only in TF32
def test_bias_relu_counts_no_tensor_pipe_and_the_fused_dot_does(device, evidence):
    elementwise, fused = counters.profile(BIAS_RELU), counters.profile(FUSED)
    evidence(device=device, bias_relu=[k.summary() for k in elementwise], fused=[k.summary() for k in fused])
    judges.assert_general_pipes_only(elementwise, "the Triton bias + ReLU kernel")
    judges.assert_tensor_cores(fused, True, "the fused matmul + bias + ReLU kernel")


@pytest.mark.claim("MC05")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_the_bias_relu_kernel_on_the_gpu_computes_relu(impl, device):
    """The learner's kernel on the GPU, whose pipes the counters read: its numbers need no counters."""
    bias_relu_checked(impl, device)


@pytest.mark.claim("MC05")
@pytest.mark.triton
def test_relu_is_a_max_after_the_last_wgmma_in_the_sm90_ptx(impl, launches):
    """The learner's bias + ReLU kernels, each built from its own source for sm_90 (on any machine),
    hold no matrix-unit instruction; in the suite's fused GEMM kernel the ReLU is an ordinary max
    after the last MMA."""
    from stackcheck.toolchains import triton_kernels as tk

    bias_relu_checked(impl, "cpu")
    assert launches(), "triton_bias_relu must launch a Triton kernel"
    own = {str(grid): kernel_source.compiled(grid).asm["ptx"] for grid in launches()}
    on_matrix_units = {kernel: MMA.findall(ptx)[:3] for kernel, ptx in own.items() if MMA.search(ptx)}
    assert not on_matrix_units, f"the learner's bias + ReLU kernels issue matrix-unit instructions: {on_matrix_units}"
    tile = tk.Tile(64, 64, 32)
    lines = tk.tile_compiled_sm90(tile, "bf16").asm["ptx"].splitlines()
    last_mma = max((i for i, line in enumerate(lines) if MMA.search(line)), default=None)
    epilogue_max = [i for i, line in enumerate(lines) if MAX.search(line) and last_mma is not None and i > last_mma]
    per_thread = tile.n * tile.m // (tile.warps * 32)
    assert last_mma is not None and len(epilogue_max) >= per_thread, (
        f"the fused kernel: last MMA at PTX line {last_mma}, {len(epilogue_max)} max.f32 after it "
        f"(expected one per accumulator value a thread holds: {per_thread})"
    )
