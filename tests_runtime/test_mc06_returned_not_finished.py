"""MC06 and §6.3: a returned call is not a finished computation. The handle (shape, dtype) exists
while the work still runs; the readiness query or a CUDA event says so."""

import pytest

from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params


@pytest.mark.claim("MC06")
@pytest.mark.parametrize("device", device_params("jax"))
def test_jax_result_exists_before_it_is_ready(impl, jax_matmul):
    f, a, b = jax_matmul
    y = f(a, f(a, f(a, b)))  # three dependent matmuls queued
    assert y.shape == b.shape and str(y.dtype) == "float32", "shape and dtype are known at once"
    assert not y.is_ready(), "right after return the computation is still running"
    impl.jax_sync(y)
    assert y.is_ready(), "after the sync it is done"
    assert abs(float(y[0, 0]) - 1.0) < 1e-3


@pytest.mark.claim("MC06")
@pytest.mark.parametrize("device", device_params("jax"))
def test_jax_sync_waits_for_every_leaf_of_a_result(impl, jax_matmul):
    """A result is often a pytree (A, Z, Y; loss and gradients). The quick leaf is queued first, the
    slow one after it: a sync that waits for the first leaf only returns with the slow one running."""
    f, a, b = jax_matmul
    quick = a[0, 0] + 1
    slow = f(a, f(a, f(a, b)))
    impl.jax_sync({"quick": quick, "slow": (slow,)})
    waiting = [name for name, leaf in (("quick", quick), ("slow", slow)) if not leaf.is_ready()]
    assert not waiting, f"after the sync every leaf is computed; still running: {waiting}"


@pytest.mark.claim("MC06")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
def test_cuda_event_is_pending_right_after_launch(impl, device):
    torch = need("torch")
    done = torch.cuda.Event()
    x = torch.zeros(1024, device=device)
    torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time queued before the fill
    x.fill_(3.0)
    done.record()
    assert tuple(x.shape) == (1024,) and x.dtype == torch.float32, "the handle is there"
    assert not done.query(), "the event has not been reached: the GPU is still working"
    impl.torch_sync(device)
    assert done.query() and float(x.sum()) == 3072.0
