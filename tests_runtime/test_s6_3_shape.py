"""§6.3: asking for shape and dtype does not wait; reading values (np.asarray, .item(), print) does.

The work is the implementation's own forward at a size that takes a while (``SIZES``), so a forward
that waits for its result before returning (pulling values to the host) fails here."""

import numpy as np
import pytest

from stackcheck.evidence import judged, timing
from stackcheck.evidence.numerics import make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.stacks.records import jax_in, torch_in

MARGIN = 20.0
SIZES = {"cpu": 2048, "cuda": 4096, "tpu": 4096}  # ~0.1 s on 2 CPU cores; ~ms on a GPU


def trial(impl, make, read, true_sync):
    """One round: shape, then values, of a fresh result; then the work alone, timed by the suite's clock
    with the framework's own wait, in the same round so a device that others share slows both alike."""
    y = make()
    shape_seconds = impl.timed_call(lambda: (y.shape, y.dtype))
    values_seconds = impl.timed_call(lambda: read(y))
    return shape_seconds, values_seconds, timing.host_timer(make, true_sync)()


def check(impl, make, read, true_sync, evidence, device):
    """``true_sync`` is the framework's own wait, for the suite's clock of the work itself."""
    samples = [trial(impl, make, read, true_sync) for _ in range(7)]
    shape, values, work = (
        timing.Measurement(name, regime, [s[i] for s in samples])
        for i, (name, regime) in enumerate(
            [("shape/dtype", "host-no-sync"), ("read values", "host-sync"), ("the work", "host-sync")]
        )
    )
    ratio, waited = timing.ratio(values, shape), timing.ratio(values, work)
    found = dict(
        device=device,
        values_over_shape=round(ratio, 1),
        values_over_work=round(waited, 2),
        shape=shape.summary(),
        values=values.summary(),
        work=work.summary(),
    )
    evidence(
        **found,
        judged=[
            judged.line("values_over_shape", ratio, at_least=MARGIN, of=("values", "shape")),
            judged.line("values_over_work", waited, at_least=0.5, of=("values", "work")),
        ],
    )
    if waited < 0.5:  # the work itself drifted as much as the margin: say so, never flake
        timing.call_it(waited, 2.0, timing.scatter(work), found)
    assert waited >= 0.5, (
        f"reading the values waits for the work, which the call left running: read {values.median * 1e3:.3f} ms, "
        f"work {work.median * 1e3:.3f} ms (a forward that waits before returning leaves nothing to wait for)"
    )
    assert ratio >= MARGIN, f"reading values waits for the work, shape does not: {ratio:.1f}x"


@pytest.mark.claim("S6.3-shape")
@pytest.mark.parametrize("device", device_params("jax"))
@pytest.mark.parametrize(
    "read", [np.asarray, lambda y: y[0, 0].item(), lambda y: print(y[:2, :2])], ids=["np.asarray", "item", "print"]
)
def test_jax_shape_is_free_values_wait(impl, evidence, device, read):
    n = SIZES[device]
    x, w, b = jax_in(make_inputs(n, n, n, seed=6), device, "float32")
    impl.jax_sync(impl.jax_forward(x, w, b))  # compile outside the trials
    check(impl, lambda: impl.jax_forward(x, w, b), read, need("jax").block_until_ready, evidence, device)


@pytest.mark.claim("S6.3-shape")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
def test_torch_item_waits(impl, evidence, device):
    n = SIZES[device]
    x, w, b = torch_in(make_inputs(n, n, n, seed=6), device, "float32")
    torch = need("torch")
    torch.cuda.synchronize()
    check(
        impl,
        lambda: impl.torch_forward(x, w, b),
        lambda y: y[0, 0].item(),
        lambda _: torch.cuda.synchronize(),
        evidence,
        device,
    )
