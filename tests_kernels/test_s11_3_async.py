"""§11.3: a Triton launch returns before its kernel has run (비동기 반환). The implementation's
wrapper is launched behind a long matmul on the same CUDA stream: when it returns, the stream must
still be busy (a wrapper that waits for its kernel leaves it idle); once synchronized, Y is right."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

AHEAD = 8192  # an [AHEAD, AHEAD] fp32 matmul queued first: tens of ms of work on any GPU
TRIES = 3  # another process's work cannot make the stream idle; a first call's compile may


@pytest.mark.claim("S11.3-async")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_the_launch_returns_before_the_kernel_finishes(impl, device):
    torch = need("torch")
    a_np, _, b_np = make_inputs(2048, 1024, 1024, seed=113)  # A[N, M], b[M]
    a, b = (torch.from_numpy(v).to(device) for v in (a_np, b_np))
    ahead = torch.from_numpy(uniform((AHEAD, AHEAD), seed=114)).to(device)
    impl.triton_bias_relu(a, b)  # compiled before anything is timed or queued
    torch.cuda.synchronize(device)
    stream = torch.cuda.current_stream(device)
    busy = []
    for _ in range(TRIES):
        queued = ahead @ ahead  # the kernel is queued behind this on the same stream
        y = impl.triton_bias_relu(a, b)
        busy.append(not stream.query())
        torch.cuda.synchronize(device)
        del queued
        if busy[-1]:
            break
    assert any(busy), (
        f"the stream was idle each time triton_bias_relu returned ({TRIES} tries, behind a {AHEAD}^2 matmul): "
        "the wrapper waited for its kernel; a launch returns at once and the kernel runs later"
    )
    want = np.maximum(a_np.astype(np.float64) + b_np, 0)
    assert_matches_reference(y.cpu().numpy(), want, dtype="float32", k=1, what="Y after the synchronize")
