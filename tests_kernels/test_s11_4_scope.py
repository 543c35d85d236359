"""§11.4: the Triton path is two kernels, torch's matmul then bias+ReLU, not one fused ReLU(XW + b)."""

import re

import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains.inductor import eager_aten_ops


@pytest.mark.claim("S11.4-scope")
@pytest.mark.parametrize("device", device_params("triton"))
def test_torch_matmul_then_one_triton_launch(impl, launches, device):
    torch = need("torch")
    x, w, b = make_inputs(33, 16, 65)
    ops, y = eager_aten_ops(impl.triton_forward, *(torch.from_numpy(v).to(device) for v in (x, w, b)))
    matmuls = [op for op in ops if op in ("mm", "matmul", "addmm")]
    assert len(matmuls) == 1 and "relu" not in ops and "add" not in ops, (
        f"torch runs the matmul, and only the matmul: {ops}"
    )
    assert len(launches()) == 1, f"then one Triton launch does bias + ReLU: {launches()}"
    assert_matches_reference(y.cpu().numpy(), reference_forward(x, w, b), dtype="float32", k=16)


@pytest.mark.claim("S11.4-scope")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_profiler_sees_two_gpu_kernels(impl, launches, device, evidence):
    torch = need("torch")
    x, w, b = (torch.from_numpy(v).to(device) for v in make_inputs(256, 128, 512))
    impl.triton_forward(x, w, b)  # compile and warm up outside the profile
    triton_names = {launch.kernel for launch in launches()}  # the implementation's own kernel, any name
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        y = impl.triton_forward(x, w, b)
        torch.cuda.synchronize()
    kernels = [
        e.name
        for e in prof.events()
        if e.device_type == torch.autograd.DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset"))
    ]
    evidence(gpu_kernels=kernels)
    ours = [k for k in kernels if k in triton_names]
    gemms = [k for k in kernels if k not in ours and re.search(r"(?i)gemm|xmma|nvjet|cutlass|sm\d+_|matmul", k)]
    assert len(ours) == 1 and gemms, (
        f"the GEMM and the bias+ReLU kernel ({sorted(triton_names)}) are separate launches (a library may "
        f"add a helper): {kernels}"
    )
    assert_matches_reference(y, reference_forward(*(v.cpu().numpy() for v in (x, w, b))), dtype="float32", k=128)
