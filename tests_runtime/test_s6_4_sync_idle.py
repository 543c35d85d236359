"""§6.4: "Python이 매 연산의 완료를 기다리면 장치가 다음 작업을 기다리며 쉬는 시간이 생길 수 있다.
비동기 제출은 host가 다음 작업을 미리 준비하고 제출하도록 돕는다." A chain of dependent GPU steps,
the implementation's forward each, waited for after every step (its sync) against once at the end,
read from the profiler's kernel timeline: waiting after every step leaves the GPU idle between steps,
while submitted ahead the kernels run back to back. A forward that waits inside (a host check of the
values) leaves it idle either way, and fails."""

import pytest

from stackcheck.evidence import device_profile, gpus, per_gpu, timing
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

STEPS = 50
# A step's kernels outlast their launch (with the profiler's cost), so they can queue back to back: N
# sized from the GPU's FP32 rate, 2048 on the H200 (per_gpu.sync_step).
N = per_gpu.sync_step(device_profile.current())
SERIES = 5  # the least idle of five: under -n auto, one chain in three ran clear of other workers
# The lines (per_gpu.SYNC_IDLE), recorded on the H200 over 9 runs of 3 series: idle 0.011-0.019
# submitted ahead, 0.09-0.56 waiting after each step (7.2x to 43x; 7.2-14.4x on a quiet GPU): at most
# 5 % idle submitted ahead (0.031 above the highest, over twice the spread 0.008), and 1.5x that
# waited for (7.2x / 1.5 = 4.8, over the quiet spread squared, 2.0^2). A forward that waits inside:
# 0.11-0.19 idle submitted ahead. Beside three other workers (.ci/gpu): 0.008-0.182 submitted ahead.


@pytest.mark.claim("S6.4-sync-idle")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
@pytest.mark.gpu_needs(line=per_gpu.sync_idle_lines)
def test_waiting_after_every_step_leaves_the_gpu_idle(impl, evidence, device):
    torch = need("torch")
    x, w, b = make_inputs(N, N, N, seed=157)
    w = w / N**0.5
    xt, wt, bt = (torch.from_numpy(a).to(device) for a in (x, w, b))

    def step(y):
        return impl.torch_forward(y, wt, bt)

    step(xt)  # warm
    each, once = timing.idle_shares(step, xt, lambda: impl.torch_sync(device), STEPS, SERIES)
    profile = device_profile.current()
    lines = per_gpu.sync_idle_lines(profile)
    if lines is None:
        device_profile.no_line(profile, {"n": N, "idle_waiting_each": each, "idle_submitted_ahead": once})
    evidence(
        device=device,
        steps=STEPS,
        n=N,
        **timing.assert_waits_leave_the_device_idle(each, once, *lines, gpus.shares_its_gpu()),
    )
    want, got = x.astype("float64"), xt
    for _ in range(STEPS):
        want, got = (want @ w.astype("float64") + b).clip(min=0), step(got)
    assert_matches_reference(got.cpu().numpy(), want, dtype="float32", k=N * STEPS, what=f"{STEPS} chained forwards")
