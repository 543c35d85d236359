"""§11.2: the course's own Triton wrapper (its listing, run as written) has no CPU fallback, takes
float32 only and implements no backward. Each test names the contract it checks; the suite's own
surface (impl.triton_bias_relu) takes CPU tensors by design, so these read the course's code."""

import numpy as np
import pytest

from stackcheck.course.wrapper import assert_refused, course_wrapper, listing_source
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params


def operands(torch, device: str, dtype=None):
    a_np, _, b_np = make_inputs(33, 65, 65, seed=112)  # A[N, M], b[M]
    return tuple(torch.from_numpy(v).to(device=device, dtype=dtype or torch.float32) for v in (a_np, b_np))


@pytest.mark.claim("S11.2-contract")
@pytest.mark.triton
def test_no_cpu_fallback():
    """Contract: CPU tensors are refused, by the wrapper, before any launch (not by Triton's launcher)."""
    torch = need("torch")
    wrapper, launches = course_wrapper(listing_source())
    assert_refused(wrapper, launches, operands(torch, "cpu"), "CPU tensors", ("CUDA",))


@pytest.mark.claim("S11.2-contract")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_float32_only_no_autograd_and_right_on_cuda(device):
    """Contracts: float16 and bfloat16 refused, tensors that require grad refused (inference only),
    and float32 on the GPU launched once and right."""
    torch = need("torch")
    wrapper, launches = course_wrapper(listing_source())
    for dtype in (torch.float16, torch.bfloat16):
        assert_refused(wrapper, launches, operands(torch, device, dtype), f"{dtype} tensors", ("float32",))
    a, b = operands(torch, device)
    assert_refused(wrapper, launches, (a.requires_grad_(), b), "a tensor that requires grad", ("autograd",))
    a, b = operands(torch, device)
    y = wrapper(a, b)
    assert len(launches) == 1, f"float32 on {device}: {len(launches)} launches"
    want = np.maximum(a.cpu().numpy().astype(np.float64) + b.cpu().numpy(), 0)
    assert_matches_reference(y.cpu().numpy(), want, dtype="float32", k=1, what="the course's wrapper, float32")
