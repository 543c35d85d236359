"""§6.4: work on one stream runs in order without host waits; across streams only an event orders it."""

import numpy as np
import pytest

from stackcheck.evidence import timing
from stackcheck.evidence.numerics import assert_exact, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.stacks.records import jax_device


@pytest.mark.claim("S6.4-order")
@pytest.mark.parametrize("device", device_params("jax"))
def test_a_dependent_chain_needs_one_final_sync(impl, device):
    jax = need("jax")
    target = jax_device(device)
    n = 1024 if device == "cpu" else 4096  # each layer must take longer than submitting it
    m_np = uniform((n, n), seed=0) * np.float32(2 / np.sqrt(n))
    b_np = uniform((n,), seed=1, low=0.0, high=0.1)
    x_np = uniform((n, n), seed=2, low=0.0, high=1.0)
    m, b, x0 = (jax.device_put(v, target) for v in (m_np, b_np, x_np))
    stepwise = x0
    for _ in range(10):  # the reference: the same layers, waiting for each one
        stepwise = impl.jax_sync(impl.jax_forward(stepwise, m, b))
    clock = timing.stopwatch()
    x = x0
    for _ in range(10):
        x = impl.jax_forward(x, m, b)  # each layer needs the one before: the runtime keeps the order
    submitted = clock()
    impl.jax_sync(x)
    total = clock()
    assert_exact(np.asarray(x), np.asarray(stepwise), what="the chain with one final sync vs waiting per layer")
    assert float(np.asarray(x).std()) > 0, "the chain must not have collapsed to a constant"
    assert submitted < total / 2, (
        f"the host submitted all 10 layers in {submitted * 1e3:.1f} ms and waited "
        f"once; the chain took {total * 1e3:.1f} ms"
    )


RACE_TRIALS = 5  # tries without the event; one stale read shows the race


@pytest.mark.claim("S6.4-order")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
def test_only_an_event_orders_two_streams(device, evidence):
    """With the event, the consumer always reads the producer's data. Without it the two streams
    race: in RACE_TRIALS tries the consumer read stale data at least once. A GPU that ran them in
    order every time (another process's work between them, a device that serializes streams) makes
    the race unseen: inconclusive, with the reads."""
    torch = need("torch")
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    reads = {False: [], True: []}
    for _ in range(RACE_TRIALS):
        for ordered in (False, True):
            x = torch.zeros(1 << 20, device=device)
            torch.cuda.synchronize()
            ready = torch.cuda.Event()
            with torch.cuda.stream(producer):
                torch.cuda._sleep(20_000_000)  # the producer is slow ...
                x.fill_(1.0)
                ready.record()
            with torch.cuda.stream(consumer):
                if ordered:
                    consumer.wait_event(ready)  # ... the consumer waits for its event
                reads[ordered].append(x.sum())
            torch.cuda.synchronize()
    total = float(1 << 20)
    found = {"unordered_reads": [float(r) for r in reads[False]], "ordered_reads": [float(r) for r in reads[True]]}
    evidence(**found, expected=total)
    assert all(r == total for r in found["ordered_reads"]), (
        f"with the event the consumer reads the producer's data: {found}"
    )
    if not timing.race_seen(found["unordered_reads"], total):
        pytest.skip(f"inconclusive: the two streams ran in order in all {RACE_TRIALS} tries without the event: {found}")


SLEEP_CYCLES = 2_000_000  # about 1 ms of one thread block spinning: the rest of the GPU stays free
SERIAL_LEAST = 1.6  # one stream's pair over one kernel: H200 1.99-2.00 (trials spread 1.01)


def one_stream_pair_over_one(pair, evidence) -> float:
    """Device time of ``pair()`` over one sleep kernel's, interleaved medians; skips when too noisy."""
    torch = need("torch")
    one = lambda: torch.cuda._sleep(SLEEP_CYCLES)  # noqa: E731
    runs = timing.interleaved(
        {"one kernel": timing.cuda_event_timer(one), "pair": timing.cuda_event_timer(pair)},
        "device-events",
        trials=9,
        warmup=2,
    )
    ratio = timing.ratio(runs["pair"], runs["one kernel"])
    record = {"one_kernel": runs["one kernel"].summary(), "pair": runs["pair"].summary()}
    timing.call_shortfall(ratio, SERIAL_LEAST, list(runs.values()), record)
    evidence(**record)
    return ratio


@pytest.mark.claim("S6.4-order")
@pytest.mark.cuda
@pytest.mark.torch
def test_one_queue_runs_its_work_one_after_another(evidence):
    """ "같은 실행 큐의 작업이 직렬로 처리될 수 있다": two independent one-block kernels on one stream
    take about twice one of them, though each leaves almost every SM free (on two streams they
    overlap: S6.4-no-overlap); a stream is a queue, run in order."""
    torch = need("torch")
    ratio = one_stream_pair_over_one(
        lambda: (torch.cuda._sleep(SLEEP_CYCLES), torch.cuda._sleep(SLEEP_CYCLES)), evidence
    )
    evidence(**timing.assert_one_queue_serial(ratio, SERIAL_LEAST))
