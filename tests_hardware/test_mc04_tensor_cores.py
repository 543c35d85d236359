"""MC04 (§14.1, §7.2): not every matmul uses Tensor Cores; dtype, settings and shape decide. Read from the
H200's counters for cuBLAS, and, on any machine, from the PTX Triton writes for sm_90."""

import re

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, per_gpu
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.toolchains import counters

N = 2048


def gemm(dtype: str, tf32: bool) -> counters.Request:
    return counters.request("matmul", n=N, dtype=dtype, tf32=tf32)


def gemv(dtype: str, tf32: bool) -> counters.Request:
    """1 x N: a shape cuBLAS may keep off the tensor pipe (recorded, not judged)."""
    return counters.request("matmul", n=1, m=N, k=N, dtype=dtype, tf32=tf32)


def case(dtype: str, tf32: bool, tensor_cores: bool, tolerance: str, id: str, needs: tuple[str, ...] = ()):
    """(dtype, TF32 allowed, expected on the tensor pipe, the tolerance row its result is held to);
    ``needs``: the tensor cores the GPU must have for the case to say anything (device_profile)."""
    profiled = [gemm(dtype, tf32)] + ([gemv(dtype, tf32)] if tensor_cores else [])
    marks = [pytest.mark.ncu(*profiled), pytest.mark.gpu_needs(*needs)]
    return pytest.param(dtype, tf32, tensor_cores, tolerance, id=id, marks=marks)


def numbers(counted):
    """A case's product on the GPU, without its counters: (dtype, TF32 allowed, tolerance row)."""
    dtype, tf32, _, tolerance = counted.values
    needs = [m for m in counted.marks if m.name == "gpu_needs"]
    return pytest.param(dtype, tf32, tolerance, id=counted.id, marks=needs)


CASES = [
    case("bfloat16", False, True, "bfloat16", id="bf16", needs=("bf16-tensor-cores",)),
    case("float16", False, True, "float16", id="fp16"),
    case("float32", True, True, "tfloat32", id="fp32-tf32", needs=("tf32",)),
    case("float32", False, False, "float32", id="fp32-ieee"),
]


@pytest.mark.claim("MC04")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.parametrize("dtype, tf32, tensor_cores, tolerance", CASES)
def test_cublas_uses_tensor_cores_by_dtype_and_setting(dtype, tf32, tensor_cores, tolerance, evidence):
    kernels = counters.profile(gemm(dtype, tf32))
    thin = counters.profile(gemv(dtype, tf32)) if tensor_cores else []
    evidence(dtype=dtype, tf32=tf32, gemm=[k.summary() for k in kernels], gemv_1xN=[k.summary() for k in thin])
    what = f"{N}^3 {dtype} matmul, TF32 {'on' if tf32 else 'off'}"
    evidence(**judges.assert_tensor_cores(kernels, tensor_cores, what))


TENSOR_CASES = [c for c in CASES if c.values[2]]


@pytest.mark.claim("MC04")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.ncu(*(r for c in TENSOR_CASES for r in (gemm(*c.values[:2]), gemv(*c.values[:2]))))
@pytest.mark.gpu_needs("bf16-tensor-cores", "tf32", line=per_gpu.shape_decides)
def test_the_shape_decides_too(evidence):
    """Each dtype and setting whose N^3 GEMM is on Tensor Cores, at the shape 1 x N: on the H200 the
    TF32 product leaves the tensor pipe for FFMAs (per_gpu.SHAPE_DECIDES); a card without a recorded
    case reports what it found."""
    by_case = {
        c.id: (counters.profile(gemm(*c.values[:2])), counters.profile(gemv(*c.values[:2]))) for c in TENSOR_CASES
    }
    profile = device_profile.current()
    found = judges.assert_shape_decides(by_case, per_gpu.shape_decides(profile))
    evidence(**found)


@pytest.mark.claim("MC04")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.parametrize("dtype, tf32, tolerance", [numbers(c) for c in CASES])
@pytest.mark.checks("each case's numbers, not which pipe computed them")
def test_cublas_products_hold_their_tolerance_by_dtype_and_setting(dtype, tf32, tolerance):
    """The numbers of each case the counters read, held to its dtype's tolerance: no counters needed."""
    from stackcheck.toolchains import workloads

    prepared = workloads.matmul(256, dtype, tf32)
    x, w = (as_numpy(t) for t in prepared.inputs)
    assert_matches_reference(prepared.step(), x @ w, dtype=tolerance, k=256, what=f"{dtype} X @ W")


WGMMA, FMA = re.compile(r"\bwgmma\.mma_async\b"), re.compile(r"\bfma\.rn\.f32\b")


@pytest.mark.claim("MC04")
@pytest.mark.triton
def test_triton_dot_for_sm90_is_wgmma_for_bf16_and_tf32_and_fma_for_ieee_fp32():
    """The same tl.dot becomes warpgroup MMA (Tensor Cores) or FP32 FMAs by dtype and input precision."""
    torch = need("torch")
    from stackcheck.toolchains.triton_kernels import Tile, matmul_bias_relu, tile_compiled_sm90

    tile = Tile(64, 64, 32)
    found = {
        f"{dtype}/{precision}": tile_compiled_sm90(tile, dtype, precision).asm["ptx"]
        for dtype, precision in (("bf16", "tf32"), ("fp32", "tf32"), ("fp32", "ieee"))
    }
    counts = {name: (len(WGMMA.findall(ptx)), len(FMA.findall(ptx))) for name, ptx in found.items()}
    assert counts["bf16/tf32"][0] > 0 and counts["fp32/tf32"][0] > 0, f"(wgmma, fma.rn.f32) per dot: {counts}"
    assert counts["fp32/ieee"][0] == 0 and counts["fp32/ieee"][1] >= tile.n * tile.m * tile.k // 128, (
        f"an IEEE fp32 dot should be FMAs, no wgmma: (wgmma, fma.rn.f32) = {counts}"
    )
    x, w, b = make_inputs(33, 40, 17, seed=41)
    y = matmul_bias_relu(*(torch.from_numpy(a) for a in (x, w, b)), Tile(16, 16, 16))  # the interpreter
    assert_matches_reference(
        y.numpy(),
        np.maximum(x.astype(np.float64) @ w + b, 0),
        dtype="float32",
        k=40,
        what="the tiled kernel's ReLU(X @ W + b)",
    )
