"""§6.3: asking for shape and dtype does not wait; reading values (np.asarray, .item(), print) does."""
import time

import numpy as np
import pytest

from stackcheck import need, stack_params
from stackcheck import timing

MARGIN = 20.0


def trial(make, read):
    y = make()
    start = time.perf_counter()
    _ = (y.shape, y.dtype)
    shape_seconds = time.perf_counter() - start
    start = time.perf_counter()
    read(y)
    return shape_seconds, time.perf_counter() - start


def check(make, read, evidence, device):
    samples = [trial(make, read) for _ in range(7)]
    shape = timing.Measurement("shape/dtype", "host-no-sync", [s for s, _ in samples])
    values = timing.Measurement("read values", "host-sync", [v for _, v in samples])
    ratio = timing.ratio(values, shape)
    evidence(device=device, values_over_shape=round(ratio, 1), shape=shape.summary(), values=values.summary())
    assert ratio >= MARGIN, f"reading values waits for the work, shape does not: {ratio:.1f}x"


@pytest.mark.claim("S6.3-shape")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
@pytest.mark.parametrize("read", [np.asarray, lambda y: y[0, 0].item(), lambda y: print(y[:2, :2])],
                         ids=["np.asarray", "item", "print"])
def test_jax_shape_is_free_values_wait(jax_matmul, evidence, stack, device, read):
    f, a, b = jax_matmul
    check(lambda: f(a, b), read, evidence, device)


@pytest.mark.claim("S6.3-shape")
@pytest.mark.parametrize("stack, device", stack_params("torch", devices=("cuda",)))
def test_torch_item_waits(torch_matmul, evidence, stack, device):
    fn, _, _ = torch_matmul
    need("torch").cuda.synchronize()
    check(fn, lambda y: y[0, 0].item(), evidence, device)
