"""§6.5: first call, repeated end-to-end, mean over many requests, device events and with transfers
measure different things, and give different numbers in the expected order for the same work."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, judged, per_gpu, timing
from stackcheck.evidence.compiles import fresh_jit
from stackcheck.evidence.numerics import as_numpy, assert_exact, assert_matches_reference
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.stacks.records import jax_device


def one_and_many(impl, request, sync, true_sync, count: int, trials: int) -> dict[str, timing.Measurement]:
    """Seconds per request: ``count`` requests each waited for ("one") and the same ``count`` queued
    behind one wait ("many"), timed by the learner's timed_call and ``sync``, and the same two by the
    suite's clock with the framework's own wait ``true_sync`` (their scatter is the work's, which may
    excuse a shortfall; the learner's never does), A B A B: drift hits all, and each trial keeps the
    device as long as the other (a GPU shared under -n auto slows them alike)."""

    def suite(many: bool):
        if many:
            return timing.host_timer(lambda: [request() for _ in range(count)][-1], true_sync)() / count
        return sum(timing.host_timer(request, true_sync)() for _ in range(count)) / count

    return timing.interleaved(
        {
            "one": lambda: sum(impl.timed_call(request, sync) for _ in range(count)) / count,
            "many": lambda: impl.timed_call(lambda: [request() for _ in range(count)][-1], sync) / count,
            "one, suite's clock": lambda: suite(many=False),
            "many, suite's clock": lambda: suite(many=True),
        },
        "host-sync",
        trials=trials,
        warmup=1,
    )


def regimes_jax(impl, device):
    """Seconds per regime for one jitted tanh(A @ A), every number a median of several trials; and
    how far the same work drifted between trials (slowest over fastest), timed again by the suite's
    clock: the queue's (its two series' worst), the first call's against the steady state's (the
    product of their two spreads, and of how far the steady state's median and the same call's timed
    beside the queue differ: a device shared with other work can slow one series and not the other),
    and the transfers' against the steady state's (the scatter of the two, timed in the same parts)."""
    jax = need("jax")
    n = 768 if device == "cpu" else 4096
    target = jax_device(device)
    a_np = np.full((n, n), 1.0 / n, dtype=np.float32)
    a = jax.device_put(a_np, target)

    def work(p, q):
        return jax.numpy.tanh(p @ q)

    def clock(fn, *args):
        return timing.host_timer(lambda: fn(*args), jax.block_until_ready)()

    def io():
        return np.asarray(f(jax.device_put(a_np, target), jax.device_put(a_np, target)))

    f = fresh_jit(jax, work)
    # on a fresh f: warm-up must come first. Three parts, each the steady state and the same call with
    # its transfers, by the learner's steady_state and by the suite's clock: a device shared with other
    # work meanwhile slows every series alike
    parts = [
        (
            impl.steady_state(lambda: f(a, a), impl.jax_sync, trials=3),
            [clock(f, a, a) for _ in range(3)],
            impl.steady_state(io, trials=2),
            [timing.host_timer(io)() for _ in range(2)],
        )
        for _ in range(3)
    ]
    named = [
        ("e2e", "host-sync"),
        ("e2e, suite's clock", "host-sync"),
        ("io", "with-transfers"),
        ("io, suite's clock", "with-transfers"),
    ]
    steady, suite_steady, with_io, suite_io = (
        timing.Measurement(name, regime, [t for part in parts for t in part[k]])
        for k, (name, regime) in enumerate(named)
    )
    # the first sample of a steady-state series, on 3 more fresh functions: one sample can meet a
    # busy shared GPU, but a series that times its compile does so every time
    starts = [steady.samples[0]] + [
        impl.steady_state(lambda g=fresh_jit(jax, work): g(a, a), impl.jax_sync, trials=2)[0] for _ in range(2)
    ]
    first_calls = [impl.timed_call(lambda g=fresh_jit(jax, work): g(a, a), impl.jax_sync) for _ in range(3)]
    firsts = timing.Measurement("first", "first-call", first_calls)
    suite_firsts = timing.Measurement("first", "first-call", [clock(fresh_jit(jax, work), a, a) for _ in range(3)])
    beside = one_and_many(impl, lambda: f(a, a), impl.jax_sync, jax.block_until_ready, count=10, trials=5)
    unsynced = timing.Measurement(
        "ns",
        "host-no-sync",
        [timing.drained_timer(impl.timed_call, lambda: f(a, a), impl.jax_sync, synced=False)() for _ in range(5)],
    )
    # the noise, all read by the suite's clock: the learner's own scatter never excuses its timer
    suite_one = beside["one, suite's clock"]
    across = max(suite_steady.median, suite_one.median) / min(suite_steady.median, suite_one.median)
    drift = max(beside[k].spread for k in ("one, suite's clock", "many, suite's clock"))
    noise = (
        drift,
        suite_firsts.spread * suite_steady.spread * across,
        [timing.scatter(suite_io), timing.scatter(suite_steady)],
    )
    return (
        noise,
        (unsynced, suite_steady),
        {
            "first call": firsts.median,
            "repeated end-to-end": steady.median,
            "first steady sample": timing.Measurement("start", "host-sync", starts).median,
            "mean over many requests": beside["many"].median,
            "end-to-end beside them": beside["one"].median,
            "with transfers": with_io.median,
            "host, no sync": unsynced.median,
            "host, no sync, fastest": min(unsynced.samples),
        },
    )


@pytest.mark.claim("S6.5-regimes")
@pytest.mark.parametrize("device", device_params("jax"))
def test_regimes_give_different_numbers_in_order(impl, evidence, device):
    (drift, first_noise, io_noise), (unsynced, work), t = regimes_jax(impl, device)
    report = {"device": device, "drift": round(drift, 2), "first_noise": round(first_noise, 2)}
    report["io_noise"] = round(max(io_noise), 2)
    report |= {k: round(v * 1e3, 3) for k, v in t.items()}
    e2e = t["repeated end-to-end"]
    lines = [
        judged.line("first call over end-to-end", t["first call"] / e2e, at_least=3),
        judged.line("first steady sample over first call", t["first steady sample"] / t["first call"], at_most=0.5),
        judged.line(
            "mean over many requests over end-to-end beside them",
            t["mean over many requests"] / t["end-to-end beside them"],
            at_most=1.5,
        ),
        judged.line("host, no sync over end-to-end", t["host, no sync"] / e2e, at_most=0.2),
    ]
    if device != "cpu":
        lines.append(judged.line("with transfers over end-to-end", t["with transfers"] / e2e, at_least=1.2))
    evidence(**report, judged=lines)
    if t["first call"] <= 3 * e2e:  # a host or GPU so shared that the series scattered as much: undecidable
        timing.call_within(t["first call"] / e2e, 3, first_noise, report)
    assert t["first call"] > 3 * e2e, f"the first call includes tracing and compiling: {t}"
    assert t["first steady sample"] < t["first call"] / 2, f"the steady state must not contain the first call: {t}"
    many = t["mean over many requests"] / t["end-to-end beside them"]
    if many > 1.5:
        timing.call_it(many, 1.5, drift, report)  # the series drifted as much: a shared device
    assert many <= 1.5, f"queued requests overlap host and device work: {t}"
    if t["host, no sync"] >= e2e / 5:  # the caller may wait its turn for a core longer than the call takes
        timing.call_early_return(unsynced, work, report)
    assert t["host, no sync"] < e2e / 5, f"without a sync the host clock sees only the submission: {t}"
    if device != "cpu":  # on a CPU backend a 'transfer' may be a no-copy view
        if t["with transfers"] <= 1.2 * e2e:  # within the scatter of the parts both were timed in
            timing.call_within(t["with transfers"] / e2e, 1.2, io_noise, report)
        assert t["with transfers"] > 1.2 * e2e, f"copies to and from the device add time: {t}"


@pytest.mark.claim("S6.5-regimes")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
def test_device_events_expose_the_unsynced_timers_error(impl, torch_matmul, evidence, device):
    """Three clocks on one 8192² GEMM: device events see the kernel only, so they sit just under
    the host-synced time and far above an unsynced host timer, whose error they expose."""
    fn, _, _ = torch_matmul
    timers = {
        "host-sync": timing.host_timer(fn, lambda _: impl.torch_sync(device)),
        "device-events": timing.cuda_event_timer(fn),
        "host-no-sync": timing.drained_timer(impl.timed_call, fn, lambda _: impl.torch_sync(device), synced=False),
    }
    runs = timing.interleaved(timers, {k: k for k in timers}, trials=11)
    floor = timing.noise_floor(timers["device-events"], "device-events", trials=7)
    events, synced, unsynced = (runs[k].median for k in ("device-events", "host-sync", "host-no-sync"))
    report = {
        "events_over_host": round(events / synced, 3),
        "unsynced_over_events": round(unsynced / events, 4),
        "noise_floor": round(floor, 3),
        **{k: v.summary() for k, v in runs.items()},
    }
    evidence(
        **report,
        judged=[
            judged.line("events_over_host", events / synced, at_least=0.5, of=("device-events", "host-sync")),
            judged.line("events_over_host", events / synced, at_most=1.1, of=("device-events", "host-sync")),
            judged.line("unsynced_over_events", unsynced / events, at_most=0.2, of=("host-no-sync", "device-events")),
        ],
    )
    # a GPU shared with other processes: undecidable when the events scatter (the host clocks hold the
    # implementation's sync or timer, whose noise is its own)
    if not 0.5 <= events / synced <= 1.1:
        timing.call_it(events / synced, 1.1, [floor, timing.scatter(runs["device-events"])], report)
    assert events / synced <= 1.1, (
        f"device events measure the kernel only; the host clock adds launch and sync: {report}"
    )
    assert events / synced >= 0.5, f"for a GEMM this large the kernel is most of the synced time: {report}"
    assert unsynced / events <= 0.2, f"events expose the unsynced timer: it saw the launch, not the GEMM: {report}"


def queued_and_waited(impl, stack: str, device: str) -> tuple[dict[str, timing.Measurement], np.ndarray]:
    """``one_and_many`` of tanh(A @ A) at a size where the host's share counts, on ``stack``; and the
    requests' result, to check."""
    n, count = per_gpu.MANY_REQUESTS_N, per_gpu.MANY_REQUESTS_COUNT
    a_np = np.full((n, n), 0.5 / n, dtype=np.float32)
    if stack == "jax":
        jax = need("jax")
        a = jax.device_put(a_np, jax_device(device))
        f = jax.jit(lambda p: jax.numpy.tanh(p @ p))
        request, sync, true_sync = lambda: f(a), impl.jax_sync, jax.block_until_ready
    else:
        torch = need("torch")
        a = torch.from_numpy(a_np).to(device)
        request, sync = lambda: torch.tanh(a @ a), lambda _: impl.torch_sync(device)
        true_sync = lambda _: torch.cuda.synchronize(device)  # noqa: E731
    return one_and_many(impl, request, sync, true_sync, count, trials=7), as_numpy(request())


QUEUED = [
    pytest.param(stack, *p.values, id=p.id, marks=p.marks)
    for stack in ("jax", "torch")
    for p in device_params(stack, devices=("cuda",))
]


@pytest.mark.claim("S6.5-regimes")
@pytest.mark.parametrize(("stack", "device"), QUEUED)
@pytest.mark.gpu_needs(line=per_gpu.many_requests_line)
def test_the_mean_over_many_requests_is_its_own_number(impl, evidence, device, stack):
    """§6.5: the mean over many requests shows queued submission and throughput: requests queued
    behind one wait cost less each than the same requests each waited for, since the host submits
    the next while the device runs the last and waits once (a sync that does not wait times both
    as submission alone: the same number)."""
    profile = device_profile.current()
    runs, y = queued_and_waited(impl, stack, device)
    many = timing.ratio(runs["many"], runs["one"])
    found = {"stack": stack, "many_over_one": round(many, 3), **{k: m.summary() for k, m in runs.items()}}
    line = per_gpu.many_requests_line(profile)
    if line is None:
        device_profile.no_line(profile, found)
    evidence(**found, judged=[judged.line("mean over many requests over one at a time", many, at_most=line)])
    if many > line:  # at most: the reciprocal falls short; undecidable within the series' scatter
        timing.call_shortfall(1 / many, 1 / line, list(runs.values()), found)
    judges.assert_many_requests_cheaper(many, line, found)
    n = per_gpu.MANY_REQUESTS_N
    assert_matches_reference(y, np.tanh(np.full((n, n), 0.25 / n)), dtype="float32", k=n, what="tanh(A @ A)")


SMALL_KERNEL_MOST = 0.6  # a 64^2 GEMM: its kernel's time over the host-synced wall clock, far below one


@pytest.mark.claim("S6.5-regimes")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
def test_the_wall_clock_is_not_one_kernels_time(impl, evidence, device):
    """For a call this small the host-synced wall clock is mostly dispatch, launch and synchronization:
    the kernel's own time, as the profiler records it on the device, is a fraction of it (§8.4:
    wall-clock time is not one kernel's time), where for the 8192^2 GEMM above the two nearly agree.
    (Device events around a lone small call are no kernel time: the device waits between them for
    the host to launch it.)"""
    torch = need("torch")
    a = torch.from_numpy(np.ones((64, 64), np.float32)).to(device)
    timers = {
        "host-sync": timing.host_timer(lambda: torch.mm(a, a), lambda _: impl.torch_sync(device)),
        "profiled-kernels": timing.kernel_timer(lambda: torch.mm(a, a)),
    }
    runs = timing.interleaved(timers, {k: k for k in timers}, trials=9)
    evidence(**timing.assert_wall_is_not_the_kernel(runs, SMALL_KERNEL_MOST))
    assert_exact(torch.mm(a, a).cpu(), np.full((64, 64), 64, np.float32), what="the 64^2 GEMM")


@pytest.mark.claim("S6.5-regimes")
@pytest.mark.demo  # it asserts only a shape: it shows the regime, and proves nothing
@pytest.mark.parametrize("device", device_params("jax"))
def test_steady_state_benchmark(impl, jax_matmul, benchmark):
    """The steady-state regime through pytest-benchmark (`--benchmark-only`; off under xdist)."""
    f, a, b = jax_matmul
    result = benchmark.pedantic(lambda: impl.jax_sync(f(a, b)), rounds=5, iterations=1, warmup_rounds=1)
    assert result.shape == a.shape
