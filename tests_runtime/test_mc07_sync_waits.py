"""MC07: synchronize waits for submitted work, it does not start it. Work submitted, the host busy
for longer than the work takes, then a sync returns at once; a sync right after submission waits."""

import time

import pytest

from stackcheck.evidence import judged, timing
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

MARGIN = 5.0  # sync at once over sync after the host was busy
NOISE = 2.0  # the same work drifting by this factor between trials makes both comparisons undecidable
TRIALS = 5


def check(impl, submit, sync, true_sync, evidence, device):
    """``sync`` is the implementation's; ``true_sync`` the framework's own, with which the suite's
    clock measures how long the work takes (a sync that does not wait cannot shorten that). The
    three series are interleaved, so a GPU that other processes share slows them alike."""
    true_sync(submit())  # warm-up
    timing.call_synchronous_backend(submit, true_sync, {"device": device})
    samples = {"work": [], "sync at once": [], "sync after host was busy": []}
    for _ in range(TRIALS):
        samples["work"].append(timing.host_timer(submit, true_sync)())
        y = submit()
        samples["sync at once"].append(impl.timed_call(lambda: y, sync))
        y = submit()
        time.sleep(3 * max(samples["work"]) + 0.01)  # the host does something else, longer than the work
        samples["sync after host was busy"].append(impl.timed_call(lambda: y, sync))
    work, at_once, later = (timing.Measurement(k, "host-sync", v) for k, v in samples.items())
    ratio = timing.ratio(at_once, later)
    report = {
        "device": device,
        "at_once_over_work": round(at_once.median / work.median, 2),
        "at_once_over_later": round(ratio, 1),
        "work": work.summary(),
        "at_once": at_once.summary(),
        "later": later.summary(),
    }
    evidence(
        **report,
        judged=[
            judged.line("at_once_over_work", at_once.median / work.median, at_least=0.5, of=("at_once", "work")),
            judged.line("at_once_over_later", ratio, at_least=MARGIN, of=("at_once", "later")),
        ],
    )
    assert at_once.median >= 0.1 * work.median, (
        f"a sync right after submission returned at once: it must wait for the work to finish: {report}"
    )
    if at_once.median < 0.5 * work.median or ratio < MARGIN:
        timing.call_it(ratio, NOISE, work.spread, report)  # the work itself drifted: a shared device
    assert at_once.median >= 0.5 * work.median, (
        f"a sync right after submission waits about as long as the work: {report}"
    )
    assert ratio >= MARGIN, (
        f"the work ran while the host was busy: the late sync had nothing left to wait for: {report}"
    )


@pytest.mark.claim("MC07")
@pytest.mark.parametrize("device", device_params("jax"))
def test_jax_work_runs_without_a_sync(impl, jax_matmul, evidence, device):
    f, a, b = jax_matmul
    check(impl, lambda: f(a, b), impl.jax_sync, need("jax").block_until_ready, evidence, device)


@pytest.mark.claim("MC07")
@pytest.mark.parametrize("device", device_params("jax"))
def test_jax_sync_waits_for_every_leaf(impl, jax_matmul, evidence, device):
    """A result is often a tree (§6.3's A, Z, Y): the sync waits for all of it, here a leaf ready at
    once first and the matmul after it."""
    f, a, b = jax_matmul
    ready = a[:1, :1] + 1
    check(impl, lambda: (ready, f(a, b)), impl.jax_sync, need("jax").block_until_ready, evidence, device)


@pytest.mark.claim("MC07")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
def test_cuda_work_runs_without_a_sync(impl, evidence, device):
    torch = need("torch")

    def submit():
        torch.cuda._sleep(50_000_000)  # a kernel of known duration, ~25 ms
        return None

    check(impl, submit, lambda _: impl.torch_sync(device), lambda _: torch.cuda.synchronize(device), evidence, device)
