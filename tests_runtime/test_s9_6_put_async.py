"""§9.6: "입력 준비의 비동기 작업까지 먼저 끝낸다." Preparing an input is asynchronous work:
jax.device_put returns while its copy to the device is still running, so a timer first waits for the
inputs; the learner's jax_sync is what waits for them."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence import timing
from stackcheck.evidence.numerics import assert_exact, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_device

MB = 64  # a copy of milliseconds on any host link: 12 ms on the H200's host (its put returned in 0.3 ms)
TRIALS = 7  # after one put that sets up the copy path (the H200's first took 22 ms to return)


@pytest.mark.claim("S9.6-put-async")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cuda", "tpu")))
def test_device_put_returns_before_its_copy_is_done(impl, evidence, stack, device):
    jax = need("jax")
    host = uniform((MB << 18,), seed=96)
    target = jax_device(device)
    impl.jax_sync(jax.device_put(host, target))
    returned, ready = [], []
    for _ in range(TRIALS):
        clock = timing.stopwatch()
        put = jax.device_put(host, target)
        returned.append(clock())
        impl.jax_sync(put)
        ready.append(clock())
    found = judges.assert_put_returns_first(returned, ready)
    evidence(device=device, megabytes=MB, **found)
    assert_exact(np.asarray(put), host, what="the device's copy of the input", stack=stack, device=device)
